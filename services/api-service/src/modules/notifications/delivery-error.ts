/**
 * A notification that could not be delivered. `retryable` says whether the same message may go
 * through on a later attempt (network trouble, 5xx, 429) or will fail the same way again (malformed
 * payload, a recipient the provider refuses); it is named like AppError's flag so a transport can
 * read either.
 */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.name = 'DeliveryError';
  }

  static permanent(message: string, cause?: unknown): DeliveryError {
    return new DeliveryError(message, false, { cause });
  }

  static transient(message: string, cause?: unknown): DeliveryError {
    return new DeliveryError(message, true, { cause });
  }
}
