import { IsEmail, Matches, MaxLength } from 'class-validator';

/** International phone format (E.164): `+` then 7 to 15 digits. */
export const E164_PATTERN = /^\+[1-9]\d{6,14}$/;
/** One-time codes are 6 digits (DECISIONS.md section 1). */
export const OTP_PATTERN = /^\d{6}$/;
/** An email address of at most 254 characters (RFC 5321's limit). */
export function IsEmailAddress(): PropertyDecorator {
  return (target, key) => {
    IsEmail()(target, key);
    MaxLength(254)(target, key);
  };
}

/** A phone number in international format (E.164); the message names the field. */
export function IsE164(): PropertyDecorator {
  return Matches(E164_PATTERN, { message: '$property must be in international format, e.g. +14155550123' });
}

/** The 6-digit one-time code. */
export function IsOtpCode(): PropertyDecorator {
  return Matches(OTP_PATTERN, { message: '$property must be the 6-digit code' });
}

/** Passwords shorter than this are refused with `weak_password`. */
export const MIN_PASSWORD_LENGTH = 8;
/** Longer inputs are refused before hashing (hashing cost must not be a lever). */
export const MAX_PASSWORD_LENGTH = 256;

/** The kinds of code `POST /auth/verify` redeems. */
export const VERIFY_TYPES = ['magiclink', 'signup', 'recovery', 'sms'] as const;
export type VerifyType = (typeof VERIFY_TYPES)[number];
