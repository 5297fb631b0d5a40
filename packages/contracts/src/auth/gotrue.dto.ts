import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { FieldErrorDto } from '../common/error-body.dto';
import { NestedList } from '../common/schema';
import {
  AddressFields,
  CodeRedemptionFields,
  RESEND_TYPES,
  type ResendType,
  SignupRequest,
  TokenRequest,
} from './auth-requests.dto';
import { User } from './auth-user.dto';
import { IsEmailAddress, MAX_PASSWORD_LENGTH } from './auth-validators';
import { IsUserMetadata, type UserMetadataData } from './user-metadata';

/**
 * The GoTrue (Supabase Auth) surface at `/auth/v1/*`, for `@supabase/auth-js` and
 * `@supabase/supabase-js` unchanged. Fields these DTOs do not declare (`gotrue_meta_security`,
 * `code_challenge` sent as null, ...) are ignored on this surface, not refused.
 */

/** A PKCE code challenge (RFC 7636): base64url of SHA-256 (43 characters) or a plain verifier. */
const PKCE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;

/** `verify` types of GoTrue: `email` redeems a signup or magic-link code; `phone_change` an SMS code. */
export const GOTRUE_VERIFY_TYPES = [
  'email',
  'signup',
  'magiclink',
  'recovery',
  'sms',
  'phone_change',
] as const;
export type GoTrueVerifyType = (typeof GOTRUE_VERIFY_TYPES)[number];

/** PKCE: the S256 (or plain) challenge (null without PKCE); the emailed link then carries `?code=`. */
function IsPkceChallenge(): PropertyDecorator {
  return (target, key) => {
    IsOptional()(target, key);
    Matches(PKCE_CHALLENGE, { message: 'code_challenge must be 43 to 128 characters of [A-Za-z0-9-._~]' })(
      target,
      key,
    );
  };
}

function IsPkceMethod(): PropertyDecorator {
  return (target, key) => {
    IsOptional()(target, key);
    IsIn(['s256', 'S256', 'plain'])(target, key);
  };
}

/** The PKCE fields auth-js sends (null without PKCE). */
export class GoTruePkceFields {
  @IsPkceChallenge()
  code_challenge?: string | null;

  @IsPkceMethod()
  code_challenge_method?: string | null;
}

/** `POST /auth/v1/signup`: the fields of `POST /auth/signup`, and PKCE. */
export class GoTrueSignupRequest extends SignupRequest {
  @IsPkceChallenge()
  code_challenge?: string | null;

  @IsPkceMethod()
  code_challenge_method?: string | null;
}

/** `POST /auth/v1/token?grant_type=password|refresh_token|pkce`. */
export class GoTrueTokenQuery {
  @IsIn(['password', 'refresh_token', 'pkce'])
  grant_type: 'password' | 'refresh_token' | 'pkce';
}

export class GoTrueTokenRequest extends TokenRequest {
  /** PKCE: the code from the link. */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  auth_code?: string;

  /** PKCE: the verifier whose challenge started the flow. */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  code_verifier?: string;
}

/** An address and `data` (user_metadata), as the OTP and user routes take them. */
export class GoTrueContactFields extends AddressFields {
  @IsOptional()
  @IsUserMetadata()
  data?: UserMetadataData;
}

/** `POST /auth/v1/otp`: a code (and, by email, a link) to sign in without a password. */
export class GoTrueOtpRequest extends GoTrueContactFields {
  /** Default true: an unknown address gets an account. With false nothing is sent to it. */
  @IsOptional()
  @IsBoolean()
  create_user?: boolean;

  @IsPkceChallenge()
  code_challenge?: string | null;

  @IsPkceMethod()
  code_challenge_method?: string | null;
}

/** `POST /auth/v1/verify`: the code with its address, or the link's `token_hash`. */
export class GoTrueVerifyRequest extends CodeRedemptionFields {
  @IsIn(GOTRUE_VERIFY_TYPES)
  type: GoTrueVerifyType;
}

/** `POST /auth/v1/resend`: `{ type, email }` or `{ type, phone }` (the link target is the `redirect_to` query). */
export class GoTrueResendRequest extends AddressFields {
  @IsIn(RESEND_TYPES)
  type: ResendType;
}

/** `POST /auth/v1/recover`. */
export class GoTrueRecoverRequest extends GoTruePkceFields {
  @IsEmailAddress()
  email: string;
}

/** `PUT /auth/v1/user`: password and `data` (user_metadata); email and phone changes are not offered. */
export class GoTrueUpdateUserRequest extends GoTrueContactFields {
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password?: string;
}

/** GoTrue's session: the token fields flat, with the user. */
export class GoTrueSession {
  @IsString()
  access_token: string;

  @IsIn(['bearer'])
  token_type: 'bearer';

  @IsInt()
  expires_in: number;

  @IsInt()
  expires_at: number;

  @IsString()
  refresh_token: string;

  @ValidateNested()
  @Type(() => User)
  user: User;
}

export class GoTrueWeakPassword {
  @IsArray()
  @IsString({ each: true })
  reasons: string[];
}

/** GoTrue's error body (API version 2024-01-01): `code` is the error code, `msg` the legacy message. */
export class GoTrueErrorBody {
  @IsString()
  code: string;

  @IsString()
  message: string;

  @IsString()
  error_code: string;

  @IsString()
  msg: string;

  /** With `weak_password`: why (auth-js reads `reasons`). */
  @IsOptional()
  @ValidateNested()
  @Type(() => GoTrueWeakPassword)
  weak_password?: GoTrueWeakPassword;

  /** Each field's problem, for validation failures. */
  @IsOptional()
  @NestedList(() => FieldErrorDto)
  errors?: FieldErrorDto[];
}

/** `POST /auth/v1/otp` and `/recover` answer an empty object. */
export class GoTrueEmpty {}
