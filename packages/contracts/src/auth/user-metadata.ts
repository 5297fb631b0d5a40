import { ValidateBy } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/** The most `user_metadata` may hold, as JSON. */
export const USER_METADATA_MAX_BYTES = 16 * 1024;

/** `user_metadata` as a client sends it: a free JSON object (`null` for a key removes it). */
export type UserMetadataData = Record<string, unknown>;

const NAME_FIELDS = ['first_name', 'last_name'] as const;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** What is wrong with a `data` value, or null. */
export function userMetadataProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be a JSON object';
  if (Buffer.byteLength(JSON.stringify(value)) > USER_METADATA_MAX_BYTES) {
    return `must be at most ${USER_METADATA_MAX_BYTES} bytes as JSON`;
  }
  const record = value as Record<string, unknown>;
  for (const field of NAME_FIELDS) {
    const name = record[field];
    if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > 100)) {
      return `${field} must be a string of at most 100 characters`;
    }
  }
  const avatar = record.avatar_url;
  if (avatar !== undefined && avatar !== null) {
    if (typeof avatar !== 'string' || avatar.length > 2048 || !isHttpUrl(avatar)) {
      return 'avatar_url must be an http(s) URL of at most 2048 characters';
    }
  }
  return null;
}

/**
 * `data` of signup and `PUT /auth/user` (Supabase Auth's `user_metadata`): any JSON object up to
 * 16 KiB; the profile fields `first_name`, `last_name` and `avatar_url` are checked when present.
 */
export function IsUserMetadata(): PropertyDecorator {
  return (target, key) => {
    ValidateBy({
      name: 'isUserMetadata',
      validator: {
        validate: (value: unknown) => userMetadataProblem(value) === null,
        defaultMessage: (args) => `${args?.property} ${userMetadataProblem(args?.value)}`,
      },
    })(target, key);
    JSONSchema({
      type: 'object',
      additionalProperties: true,
      description:
        'Free user_metadata (a JSON object up to 16 KiB), merged into the stored one key by key; `null` removes a key. ' +
        '`first_name`/`last_name` (strings up to 100) and `avatar_url` (http(s) URL) are checked when present.',
      properties: {
        first_name: { type: ['string', 'null'], maxLength: 100 },
        last_name: { type: ['string', 'null'], maxLength: 100 },
        avatar_url: { type: ['string', 'null'], format: 'uri', maxLength: 2048 },
      },
    } as Record<string, unknown>)(target, key as string);
  };
}
