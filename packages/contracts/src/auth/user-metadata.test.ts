import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { refused } from '../test-support/refused';
import { SignupRequest } from './auth-requests.dto';
import { USER_METADATA_MAX_BYTES, userMetadataProblem } from './user-metadata';

const signup = (data: unknown) => ({ email: 'ada@example.com', password: 'long enough', data });

describe('user_metadata (signup and PUT /auth/user data)', () => {
  test('must be a JSON object: not a list, a string or null', () => {
    expect(userMetadataProblem({ team: 'chassis', nested: { a: [1] } })).toBeNull();
    expect(userMetadataProblem([1, 2])).toBe('must be a JSON object');
    expect(userMetadataProblem('first_name=Ada')).toBe('must be a JSON object');
    expect(userMetadataProblem(null)).toBe('must be a JSON object');
    expect(refused(SignupRequest, signup(['Ada']))).toEqual(['data']);
  });

  test('the 16 KiB limit counts UTF-8 bytes of the JSON, not characters', () => {
    const overhead = JSON.stringify({ a: '' }).length;
    expect(userMetadataProblem({ a: 'x'.repeat(USER_METADATA_MAX_BYTES - overhead) })).toBeNull();
    expect(userMetadataProblem({ a: 'x'.repeat(USER_METADATA_MAX_BYTES - overhead + 1) })).toMatch(
      /16384 bytes/,
    );
    // Half as many characters, each two bytes: over the limit although far below it in length.
    const accented = 'é'.repeat((USER_METADATA_MAX_BYTES - overhead) / 2 + 1);
    expect(accented.length).toBeLessThan(USER_METADATA_MAX_BYTES / 2 + 1);
    expect(userMetadataProblem({ a: accented })).toMatch(/bytes as JSON/);
  });

  test.each([
    [{ first_name: 'Ada', last_name: null }, null],
    [{ first_name: 'A'.repeat(100) }, null],
    [{ first_name: 'A'.repeat(101) }, 'first_name must be a string of at most 100 characters'],
    [{ last_name: 7 }, 'last_name must be a string of at most 100 characters'],
    [{ avatar_url: 'https://cdn.example.com/ada.png' }, null],
    [{ avatar_url: 'http://localhost:9000/ada.png' }, null],
    [{ avatar_url: null }, null],
    [{ avatar_url: 'javascript:alert(1)' }, 'avatar_url must be an http(s) URL of at most 2048 characters'],
    [
      { avatar_url: 'ftp://example.com/ada.png' },
      'avatar_url must be an http(s) URL of at most 2048 characters',
    ],
    [{ avatar_url: 'ada.png' }, 'avatar_url must be an http(s) URL of at most 2048 characters'],
    [
      { avatar_url: `https://example.com/${'a'.repeat(2048)}` },
      'avatar_url must be an http(s) URL of at most 2048 characters',
    ],
  ])('profile fields are checked when present: %j', (data, problem) => {
    expect(userMetadataProblem(data)).toBe(problem);
    expect(refused(SignupRequest, signup(data))).toEqual(problem ? ['data'] : []);
  });

  test('the refusal names the field and what is wrong with it', () => {
    const [error] = validateSync(plainToInstance(SignupRequest, signup({ avatar_url: 'ftp://x.test/a' })));
    expect(Object.values(error.constraints ?? {})).toEqual([
      'data avatar_url must be an http(s) URL of at most 2048 characters',
    ]);
  });
});
