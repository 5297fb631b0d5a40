import { IsIn, IsNotEmpty, IsOptional, IsString, IsUrl, MaxLength } from 'class-validator';
import { NestedList } from '../common/schema';
import {
  IsE164,
  IsEmailAddress,
  IsOtpCode,
  MAX_PASSWORD_LENGTH,
  VERIFY_TYPES,
  type VerifyType,
} from './auth-validators';
import { IsUserMetadata, type UserMetadataData } from './user-metadata';

/** An account's address: `email`, or `phone` in international format (`+14155550123`). */
export class AddressFields {
  @IsOptional()
  @IsEmailAddress()
  email?: string;

  /** International format, e.g. `+14155550123`. */
  @IsOptional()
  @IsE164()
  phone?: string;
}

/** `POST /auth/signup`: one of `email` or `phone`, a password, optional profile data. */
export class SignupRequest extends AddressFields {
  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password: string;

  @IsOptional()
  @IsUserMetadata()
  data?: UserMetadataData;
}

/** `POST /auth/login`. */
export class LoginRequest {
  @IsEmailAddress()
  email: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password: string;
}

/** `POST /auth/phone-login`. */
export class PhoneLoginRequest {
  @IsE164()
  phone_number: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password: string;
}

/** `POST /auth/magic-link` and `POST /auth/recover`. */
export class EmailCodeRequest {
  @IsEmailAddress()
  email: string;

  /** Where the link in the email lands after verification (must be an allowed origin). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  redirect_to?: string;
}

/** What `resend` sends again: a signup's confirmation by email or SMS, or an email or phone change's code. */
export const RESEND_TYPES = ['signup', 'sms', 'email_change', 'phone_change'] as const;
export type ResendType = (typeof RESEND_TYPES)[number];

/** `POST /auth/resend` and `POST /auth/v1/resend` (auth-js `resend()`): one of `email` or `phone`. */
export class ResendRequest extends AddressFields {
  @IsIn(RESEND_TYPES)
  type: ResendType;

  /** Where the link in the email lands after verification (must be an allowed origin). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  redirect_to?: string;
}

/** `POST /auth/phone-otp`. */
export class PhoneOtpRequest {
  @IsE164()
  phone_number: string;
}

/** `POST /auth/verify-phone-otp`. */
export class VerifyPhoneOtpRequest {
  @IsE164()
  phone_number: string;

  /** The 6-digit code received by SMS. */
  @IsOtpCode()
  token: string;
}

/** A one-time code to redeem: `email` (or `phone` for SMS) with the 6-digit `token`, or the link's `token_hash`. */
export class CodeRedemptionFields extends AddressFields {
  @IsOptional()
  @IsOtpCode()
  token?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  token_hash?: string;
}

/**
 * `POST /auth/verify`: redeems a code. Either `email` (or `phone` for `sms`) with the 6-digit
 * `token`, or the `token_hash` carried by the link in the message.
 */
export class VerifyRequest extends CodeRedemptionFields {
  @IsIn(VERIFY_TYPES)
  type: VerifyType;
}

/** `GET /auth/verify?type&token&redirect_to`: the link in a magic-link, signup or recovery email. */
export class VerifyLinkQuery {
  @IsIn(['magiclink', 'signup', 'recovery'])
  type: Exclude<VerifyType, 'sms'>;

  /** The link token (not the 6-digit code). */
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  token: string;

  @IsOptional()
  @IsString()
  @MaxLength(2048)
  redirect_to?: string;
}

/** `POST /auth/refresh`. Browser clients may send the refresh cookie instead. */
export class RefreshRequest {
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  refresh_token?: string;
}

/** `POST /auth/token?grant_type=password|refresh_token` (GoTrue compatible). */
export class TokenQuery {
  @IsIn(['password', 'refresh_token'])
  grant_type: 'password' | 'refresh_token';

  /** Set to `true` to receive the session as HttpOnly cookies as well. */
  @IsOptional()
  @IsIn(['true', 'false'])
  cookie?: 'true' | 'false';
}

/** Body of `POST /auth/token`: `email`/`phone` + `password`, or `refresh_token`. */
export class TokenRequest extends AddressFields {
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password?: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  refresh_token?: string;
}

/** `?cookie=true` on the login routes also sets HttpOnly session cookies. */
export class CookieQuery {
  @IsOptional()
  @IsIn(['true', 'false'])
  cookie?: 'true' | 'false';
}

/** `PUT /auth/user`. */
export class UpdateUserRequest {
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password?: string;

  @IsOptional()
  @IsUserMetadata()
  data?: UserMetadataData;
}

/** `POST /auth/logout?scope=local|others|global` (GoTrue): this session, the others, or all. */
/** One ended session whose access tokens may still be unexpired. */
export class RevokedSession {
  @IsString()
  session_id: string;

  /** After this time every access token of the session has expired anyway. */
  @IsString()
  expires_at: string;
}

/** `GET /auth/sessions/revoked`: what other services must refuse (read at start and on reconnect). */
export class RevokedSessionList {
  @NestedList(() => RevokedSession)
  items: RevokedSession[];

  /** Server time of the answer. */
  @IsString()
  as_of: string;
}

export class LogoutQuery {
  @IsOptional()
  @IsIn(['local', 'others', 'global'])
  scope?: 'local' | 'others' | 'global';
}
