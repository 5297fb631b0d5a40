import { ERROR_CODES, ERROR_STATUS } from './errors';

describe('error codes', () => {
  test('every code of DECISIONS.md section 0 is in the closed list, each with an error status', () => {
    const decided = `validation_failed, unauthorized, invalid_credentials, token_expired, forbidden,
      not_found, conflict, version_conflict, lock_held, locked, gone, payload_too_large,
      unsupported_media_type, rate_limited, otp_expired, otp_invalid, email_exists,
      weak_password, tenant_required, unavailable, internal, range_not_satisfiable,
      email_not_confirmed, phone_not_confirmed, phone_exists`.split(/[\s,]+/);
    expect(ERROR_CODES).toEqual(expect.arrayContaining(decided));
    for (const code of ERROR_CODES)
      expect([code, ERROR_STATUS[code] >= 400 && ERROR_STATUS[code] < 600]).toEqual([code, true]);
  });

  test('401 is a credential problem, 403 a role, 404 an unknown or unseen resource (section 0)', () => {
    const codesOf = (status: number) => ERROR_CODES.filter((c) => ERROR_STATUS[c] === status);
    expect(codesOf(401)).toEqual(['unauthorized', 'token_expired', 'otp_expired', 'otp_invalid']);
    expect(codesOf(403)).toEqual(['forbidden']);
    expect(codesOf(404)).toEqual(['not_found']);
    expect(codesOf(503)).toEqual(['unavailable']);
  });
});
