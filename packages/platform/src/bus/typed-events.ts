import { type EventEnvelope, type EventOf, eventProblem, type RoutingKey } from '@hwp/contracts';

/**
 * A message whose type or payload is not what its routing key promises: retrying cannot help, so
 * the consumer dead-letters it at once (`retryable: false`, see isPermanentFailure), with the reason.
 */
export class InvalidEventError extends Error {
  readonly retryable = false;

  constructor(problem: string) {
    super(`invalid event: ${problem}`);
    this.name = 'InvalidEventError';
  }
}

/**
 * The envelope as an event of `keys`, its payload checked at the edge (the fields its consumers
 * rely on, of the right kind); throws InvalidEventError otherwise.
 */
export function checkedEvent<K extends RoutingKey>(envelope: EventEnvelope, keys: readonly K[]): EventOf<K> {
  const problem = eventProblem(envelope, keys);
  if (problem) throw new InvalidEventError(problem);
  return envelope as EventOf<K>;
}
