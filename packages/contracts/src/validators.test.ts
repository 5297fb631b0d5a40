import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import {
  CreatePartRequest,
  LoginRequest,
  PhoneLoginRequest,
  PhoneOtpRequest,
  SignupRequest,
  VerifyPhoneOtpRequest,
} from './index';

/** The fields a DTO refuses for `input` (whitelist on, as the services validate). */
function refused(dto: new () => object, input: Record<string, unknown>): string[] {
  const errors = validateSync(plainToInstance(dto, input), {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
  });
  return errors.map((e) => e.property).sort();
}

describe('contract validators', () => {
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
    const long = `${'a'.repeat(64)}@${'b'.repeat(186)}.com`;
    expect(long.length).toBeGreaterThan(254);
    expect(refused(LoginRequest, { email: long, password: 'x' })).toEqual(['email']);
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
    ['BRK-100', true],
    ['a', true],
    ['M4x10/DIN912#A2+', true],
    ['-starts-with-dash', false],
    ['has space', false],
    ['x'.repeat(65), false],
    ['ü-umlaut', false],
  ])('part number %s valid: %s', (partNumber, valid) => {
    expect(refused(CreatePartRequest, { workspace: 'w', name: 'n', partNumber })).toEqual(
      valid ? [] : ['partNumber'],
    );
  });

  test('part attributes must be a JSON object; tags are bounded', () => {
    expect(refused(CreatePartRequest, { workspace: 'w', name: 'n', attributes: { pitch: 0.7 } })).toEqual([]);
    expect(refused(CreatePartRequest, { workspace: 'w', name: 'n', attributes: 'pitch=0.7' })).toEqual([
      'attributes',
    ]);
    expect(refused(CreatePartRequest, { workspace: 'w', name: 'n', attributes: [1, 2] })).toEqual([
      'attributes',
    ]);
    expect(refused(CreatePartRequest, { workspace: 'w', name: 'n', tags: Array(101).fill('t') })).toEqual([
      'tags',
    ]);
    expect(refused(CreatePartRequest, { workspace: 'w', name: 'n', tags: [''] })).toEqual(['tags']);
  });
});
