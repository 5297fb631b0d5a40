import { IsISO8601, IsNotEmpty, IsString, IsUUID, MaxLength } from 'class-validator';
import { type Items, ItemsOf } from '../common/paging';
import { Nullable } from '../common/schema';

/** Workspace API keys: read-only bearer credentials for ERP integrations (BOM and part reads, exports). */

export const API_KEY_PREFIX = 'hwpk_';

/** `POST /v1/workspaces/:name/api-keys` (manager+). */
export class CreateApiKeyRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;
}

export class ApiKey {
  @IsUUID()
  id: string;

  @IsString()
  name: string;

  @IsString()
  workspace: string;

  /** The key's first characters, to tell keys apart (the rest is never shown again). */
  @IsString()
  prefix: string;

  @IsString()
  createdBy: string;

  @IsISO8601()
  createdAt: string;

  @IsISO8601()
  @Nullable()
  lastUsedAt: string | null;

  @IsISO8601()
  @Nullable()
  revokedAt: string | null;
}

/** The answer of a create: the only time the key itself is shown. */
export class CreatedApiKey extends ApiKey {
  /** `Authorization: Bearer <key>`. Stored hashed; lost keys are revoked and replaced. */
  @IsString()
  key: string;
}

export const ApiKeyList = ItemsOf(ApiKey, 'ApiKeyList');
export type ApiKeyList = Items<ApiKey>;
