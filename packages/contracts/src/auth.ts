import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { NestedList, Nullable } from './schema';

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

/** Profile data a user may set (the `user_metadata` of section 2.1). */
export class UserMetadataInput {
  @IsOptional()
  @IsString()
  @MaxLength(100)
  first_name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(100)
  last_name?: string;

  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true })
  @MaxLength(2048)
  avatar_url?: string;
}

/** `POST /auth/signup`: one of `email` or `phone`, a password, optional profile data. */
export class SignupRequest {
  @IsOptional()
  @IsEmailAddress()
  email?: string;

  /** International format, e.g. `+14155550123`. */
  @IsOptional()
  @IsE164()
  phone?: string;

  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => UserMetadataInput)
  data?: UserMetadataInput;
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

/**
 * `POST /auth/verify`: redeems a code. Either `email` (or `phone` for `sms`) with the 6-digit
 * `token`, or the `token_hash` carried by the link in the message.
 */
export class VerifyRequest {
  @IsIn(VERIFY_TYPES)
  type: VerifyType;

  @IsOptional()
  @IsEmailAddress()
  email?: string;

  @IsOptional()
  @IsE164()
  phone?: string;

  @IsOptional()
  @IsOtpCode()
  token?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  token_hash?: string;
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
export class TokenRequest {
  @IsOptional()
  @IsEmailAddress()
  email?: string;

  @IsOptional()
  @IsE164()
  phone?: string;

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
  @ValidateNested()
  @Type(() => UserMetadataInput)
  data?: UserMetadataInput;
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

export class AppMetadata {
  /** How the account was first created: `email` or `phone`. */
  @IsIn(['email', 'phone'])
  provider: 'email' | 'phone';

  @IsArray()
  @IsString({ each: true })
  providers: string[];
}

export class UserMetadata {
  @IsOptional()
  @IsString()
  first_name?: string;

  @IsOptional()
  @IsString()
  last_name?: string;

  @IsOptional()
  @IsString()
  avatar_url?: string;
}

export class IdentityData {
  @IsString()
  sub: string;

  @IsOptional()
  @IsString()
  email?: string;

  @IsOptional()
  @IsString()
  phone?: string;

  @IsBoolean()
  email_verified: boolean;

  @IsBoolean()
  phone_verified: boolean;
}

/** One way the user signs in (GoTrue's identity). */
export class Identity {
  @IsUUID()
  identity_id: string;

  /** The provider's id of the user (here the user id). */
  @IsString()
  id: string;

  @IsUUID()
  user_id: string;

  @ValidateNested()
  @Type(() => IdentityData)
  identity_data: IdentityData;

  @IsIn(['email', 'phone'])
  provider: 'email' | 'phone';

  @IsISO8601()
  @Nullable()
  last_sign_in_at: string | null;

  @IsISO8601()
  created_at: string;

  @IsISO8601()
  updated_at: string;

  @IsString()
  email: string;
}

/** The user inside login responses (section 2.1); every field is always present. */
export class User {
  @IsUUID()
  id: string;

  /** Audience of the token: `authenticated`. */
  @IsString()
  aud: string;

  @IsString()
  role: string;

  /** Empty string for phone-only accounts. */
  @IsString()
  email: string;

  @IsISO8601()
  @Nullable()
  email_confirmed_at: string | null;

  /** Empty string for email-only accounts. */
  @IsString()
  phone: string;

  @IsISO8601()
  @Nullable()
  phone_confirmed_at: string | null;

  /** The earlier of email and phone confirmation. */
  @IsISO8601()
  @Nullable()
  confirmed_at: string | null;

  @IsISO8601()
  @Nullable()
  last_sign_in_at: string | null;

  @ValidateNested()
  @Type(() => AppMetadata)
  app_metadata: AppMetadata;

  @ValidateNested()
  @Type(() => UserMetadata)
  user_metadata: UserMetadata;

  @NestedList(() => Identity)
  identities: Identity[];

  @IsISO8601()
  created_at: string;

  @IsISO8601()
  updated_at: string;
}

/** Section 2.2. */
export class Session {
  /** JWT for API access (RS256/ES256, see `/.well-known/jwks.json`). */
  @IsString()
  access_token: string;

  /** Opaque, single use: every refresh returns a new one. */
  @IsString()
  refresh_token: string;

  /** Seconds until the access token expires. */
  @IsInt()
  expires_in: number;

  /** Epoch seconds when the access token expires. */
  @IsInt()
  expires_at: number;

  @IsIn(['bearer'])
  token_type: 'bearer';
}

/** `{ user, session }` of every login route. */
export class AuthResponse {
  @ValidateNested()
  @Type(() => User)
  user: User;

  @ValidateNested()
  @Type(() => Session)
  session: Session;
}

/** Signup answers `session: null` while the email or phone awaits confirmation. */
export class SignupResponse {
  @ValidateNested()
  @Type(() => User)
  user: User;

  @ValidateNested()
  @Type(() => Session)
  @Nullable()
  session: Session | null;
}

/** `{ user }` of `PUT /auth/user` and `GET /auth/user`. */
export class UserResponse {
  @ValidateNested()
  @Type(() => User)
  user: User;
}

export class MessageResponse {
  @IsString()
  message: string;
}

/** One public key of the access-token signer (RFC 7517). */
export class Jwk {
  @IsIn(['RSA', 'EC'])
  kty: 'RSA' | 'EC';

  @IsString()
  kid: string;

  @IsIn(['sig'])
  use: 'sig';

  @IsIn(['RS256', 'ES256'])
  alg: 'RS256' | 'ES256';

  @IsOptional()
  @IsString()
  n?: string;

  @IsOptional()
  @IsString()
  e?: string;

  @IsOptional()
  @IsString()
  crv?: string;

  @IsOptional()
  @IsString()
  x?: string;

  @IsOptional()
  @IsString()
  y?: string;
}

/** `GET /.well-known/jwks.json`. */
export class JwkSet {
  @NestedList(() => Jwk)
  keys: Jwk[];
}

/** Claims of an access token (DECISIONS.md section 1). */
export interface AccessTokenClaims {
  sub: string;
  aud: 'authenticated';
  role: 'authenticated';
  email: string;
  phone: string;
  session_id: string;
  iat: number;
  exp: number;
  iss: string;
}
