import {
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { SIGNED_URL_MAX_TTL_MS } from './shared-files.dto';

/** Signed URLs of `/v1/serve/...`: made by a member, read without credentials until they expire. */

export class SignedUrlQuery {
  /** A `/v1/serve/<workspace>/<username>/<filename>` path. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(1500)
  path: string;

  /** Default 15 minutes, at most 7 days. */
  @IsOptional()
  @IsInt()
  @Min(1000)
  @Max(SIGNED_URL_MAX_TTL_MS)
  ttlMs?: number;
}

export class SignedServeQuery {
  @IsString()
  @Matches(/^\d{1,15}$/, { message: 'epoch milliseconds' })
  expires: string;

  @IsString()
  @MaxLength(128)
  sig: string;

  @IsOptional()
  @IsString()
  @MaxLength(32)
  kid?: string;
}

export class SignedUrl {
  @IsString()
  url: string;

  @IsISO8601()
  expiresAt: string;
}
