import { IsISO8601, IsOptional, IsString } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { FreeFormObject, Nullable } from '../common/schema';
import type { PartDomain } from '../parts/part-constants';

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

/**
 * Exchange rates for cost rollups: one unit of each listed currency is worth `rate` units of `base`.
 * Without them, a rollup over several currencies reports each apart.
 */
export interface CurrencyRates {
  base: string;
  rates: Record<string, number>;
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

  /** `{ base: 'USD', rates: { EUR: 1.08 } }`, or null to remove; also accepted as `currency_rates`. */
  @IsOptional()
  @JSONSchema({
    description: '{ base: ISO 4217 code, rates: { <code>: units of base per unit } }, or null to remove',
    anyOf: [{ type: 'object', additionalProperties: true }, { type: 'null' }],
  })
  currencyRates?: CurrencyRates | null;
}

export class BomSettings {
  @IsString()
  workspace: string;

  @FreeFormObject('Per domain: { prefix, width }')
  numberingRules: Partial<Record<PartDomain, NumberingRule>>;

  @FreeFormObject('Per domain: { required, enforce, schema? }')
  domainTemplates: Partial<Record<PartDomain, DomainTemplate>>;

  /** The rates of cost rollups (`null`: none, currencies are reported apart). */
  @IsOptional()
  @JSONSchema({
    anyOf: [
      {
        type: 'object',
        required: ['base', 'rates'],
        properties: {
          base: { type: 'string' },
          rates: { type: 'object', additionalProperties: { type: 'number' } },
        },
      },
      { type: 'null' },
    ],
  })
  currencyRates: CurrencyRates | null;

  /** `null` while the defaults apply. */
  @IsISO8601()
  @Nullable()
  updatedAt: string | null;

  @IsString()
  @Nullable()
  updatedBy: string | null;
}
