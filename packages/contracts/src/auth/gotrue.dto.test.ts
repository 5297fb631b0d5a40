import { refused } from '../test-support/refused';
import { GoTrueOtpRequest, GoTrueRecoverRequest, GoTrueSignupRequest } from './gotrue.dto';

const S256 = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'; // RFC 7636 appendix B: 43 characters

describe('GoTrue PKCE fields', () => {
  test.each([
    [S256, true],
    ['a'.repeat(128), true], // a plain verifier may be up to 128 characters
    ['A-z0_9.~'.repeat(6), true],
    [S256.slice(1), false], // 42
    ['a'.repeat(129), false],
    [`${S256.slice(0, 42)}+`, false], // base64, not base64url
    [`${S256.slice(0, 42)}=`, false],
    [`${S256.slice(0, 42)}/`, false],
  ])('code_challenge %s valid: %s', (challenge, valid) => {
    expect(refused(GoTrueOtpRequest, { email: 'ada@example.com', code_challenge: challenge })).toEqual(
      valid ? [] : ['code_challenge'],
    );
  });

  test('auth-js sends null for both fields without PKCE', () => {
    const body = { email: 'ada@example.com', code_challenge: null, code_challenge_method: null };
    expect(refused(GoTrueRecoverRequest, body)).toEqual([]);
    expect(refused(GoTrueSignupRequest, { ...body, password: 'long enough' })).toEqual([]);
  });

  test.each([
    ['s256', true],
    ['S256', true],
    ['plain', true],
    ['SHA256', false],
    ['Plain', false],
  ])('code_challenge_method %s valid: %s', (method, valid) => {
    expect(
      refused(GoTrueSignupRequest, {
        email: 'ada@example.com',
        password: 'long enough',
        code_challenge: S256,
        code_challenge_method: method,
      }),
    ).toEqual(valid ? [] : ['code_challenge_method']);
  });
});
