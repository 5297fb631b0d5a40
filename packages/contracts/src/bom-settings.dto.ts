import { IsISO8601, IsOptional, IsString } from 'class-validator';
import type { PartDomain } from './part-constants';
import { FreeFormObject, Nullable } from './schema';

/** A numbering rule: `<prefix><zero-padded sequence of width digits>`, e.g. `MEC-` + 5 -> `MEC-00042`. */
export interface NumberingRule {
  prefix: string;
  width: number;
}

/**
 * A domain template (section 2.10): `required` attributes, refused when missing if `enforce`, else
 * reported as warnings (import); `schema` a JSON Schema the attributes must satisfy.
 */
export interface DomainTemplate {
  required: string[];
  enforce: boolean;
  schema?: Record<string, unknown>;
}

/** `POST /v1/workspaces/:name/bom-settings` (manager+): each field given replaces the stored one. */
export class UpdateBomSettingsRequest {
  /** Per domain `{ prefix, width }`; also accepted as `numbering_rules`. */
  @IsOptional()
  @FreeFormObject('Per domain: { prefix, width }')
  numberingRules?: Partial<Record<PartDomain, NumberingRule>>;

  /** Per domain `{ required, enforce, schema? }`; also accepted as `domain_templates`. */
  @IsOptional()
  @FreeFormObject('Per domain: { required: string[], enforce: boolean, schema?: JSON Schema }')
  domainTemplates?: Partial<Record<PartDomain, DomainTemplate>>;
}

export class BomSettings {
  @IsString()
  workspace: string;

  @FreeFormObject('Per domain: { prefix, width }')
  numberingRules: Partial<Record<PartDomain, NumberingRule>>;

  @FreeFormObject('Per domain: { required, enforce, schema? }')
  domainTemplates: Partial<Record<PartDomain, DomainTemplate>>;

  /** `null` while the defaults apply. */
  @IsISO8601()
  @Nullable()
  updatedAt: string | null;

  @IsString()
  @Nullable()
  updatedBy: string | null;
}
