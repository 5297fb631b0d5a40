import { refused } from '../test-support/refused';
import {
  EmailCodeRequest,
  LoginRequest,
  PhoneLoginRequest,
  PhoneOtpRequest,
  SignupRequest,
  VerifyPhoneOtpRequest,
} from './auth-requests.dto';

describe('auth validators', () => {
  test.each([
    ['+14155550123', true],
    ['+491701234567', true],
    ['+441234', false], // too short: 7 to 15 digits after the +
    ['+1234567890123456', false], // 16 digits
    ['14155550123', false], // no +
    ['+04155550123', false], // no leading zero country code
    ['+1 415 555 0123', false],
  ])('E.164 phone %s valid: %s', (phone, valid) => {
    expect(refused(PhoneOtpRequest, { phone_number: phone })).toEqual(valid ? [] : ['phone_number']);
  });

  test.each([
    ['123456', true],
    ['12345', false],
    ['1234567', false],
    ['12345a', false],
    ['١٢٣٤٥٦', false], // Arabic-Indic digits are not the code
  ])('one-time code %s valid: %s', (token, valid) => {
    expect(refused(VerifyPhoneOtpRequest, { phone_number: '+14155550123', token })).toEqual(
      valid ? [] : ['token'],
    );
  });

  test('email addresses: shape and the 254-character limit of RFC 5321', () => {
    expect(refused(LoginRequest, { email: 'ada@example.com', password: 'x' })).toEqual([]);
    expect(refused(LoginRequest, { email: 'not-an-email', password: 'x' })).toEqual(['email']);
    // Parts as long as they may be (64 before the @, labels of 63): at 255 only the total is too long.
    const at254 = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
    expect(at254.length).toBe(254);
    expect(refused(LoginRequest, { email: at254, password: 'x' })).toEqual([]);
    const at255 = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`;
    expect(refused(LoginRequest, { email: at255, password: 'x' })).toEqual(['email']);
  });

  test('signup takes email or phone with a password; unknown fields are refused', () => {
    expect(refused(SignupRequest, { email: 'a@example.com', password: 'long enough' })).toEqual([]);
    expect(refused(SignupRequest, { phone: '+14155550123', password: 'long enough' })).toEqual([]);
    expect(refused(SignupRequest, { email: 'a@example.com', password: 'x'.repeat(300) })).toEqual([
      'password',
    ]);
    expect(refused(SignupRequest, { email: 'a@example.com', password: 'p', admin: true })).toEqual(['admin']);
    expect(refused(PhoneLoginRequest, { phone_number: '+14155550123', password: '' })).toEqual(['password']);
  });

  test.each([
    ['http://localhost:3000/welcome', true], // no top-level domain needed (development origins)
    ['https://app.example.com/after-login?x=1', true],
    ['app.example.com/after-login', false], // the scheme is required
    ['javascript:alert(1)', false],
    ['ftp://files.example.com/', false],
    [`https://example.com/${'p'.repeat(2048)}`, false],
  ])('redirect_to %s valid: %s', (redirect, valid) => {
    expect(refused(EmailCodeRequest, { email: 'ada@example.com', redirect_to: redirect })).toEqual(
      valid ? [] : ['redirect_to'],
    );
  });
});
