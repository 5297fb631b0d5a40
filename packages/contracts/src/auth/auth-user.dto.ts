import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsISO8601,
  IsOptional,
  IsString,
  IsUUID,
  ValidateNested,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { NestedList, Nullable } from '../common/schema';

export class AppMetadata {
  /** How the account was first created: `email` or `phone`. */
  @IsIn(['email', 'phone'])
  provider: 'email' | 'phone';

  @IsArray()
  @IsString({ each: true })
  providers: string[];
}

/** `user_metadata`: a free object; the profile fields are listed. */
@JSONSchema({ additionalProperties: true })
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
