import {
  type BomSettings,
  type CurrencyRates,
  type DomainTemplate,
  type FieldError,
  type NumberingRule,
  PART_DOMAINS,
  type PartDomain,
  type UpdateBomSettingsRequest,
} from '@hwp/contracts';
import { ValidationError } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { usernames } from '../identity/usernames';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { BomSettingsEntity } from './part.entity';
import {
  DEFAULT_DOMAIN_TEMPLATES,
  domainTemplateErrors,
  isCurrencyCode,
  numberingRuleErrors,
} from './part-rules';

/** The rules parts of a workspace are written under. */
export interface PartRules {
  numberingRules: Partial<Record<PartDomain, NumberingRule>>;
  domainTemplates: Partial<Record<PartDomain, DomainTemplate>>;
}

function perDomain<T>(
  field: string,
  value: Record<string, unknown>,
  check: (domain: string, item: unknown) => FieldError[],
  normalise: (item: unknown) => T,
): { value: Partial<Record<PartDomain, T>>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const out: Partial<Record<PartDomain, T>> = {};
  for (const [domain, item] of Object.entries(value)) {
    if (!(PART_DOMAINS as readonly string[]).includes(domain)) {
      errors.push({
        field: `${field}.${domain}`,
        message: `unknown domain; one of ${PART_DOMAINS.join(', ')}`,
      });
      continue;
    }
    const found = check(domain, item);
    if (found.length > 0) errors.push(...found);
    else out[domain as PartDomain] = normalise(item);
  }
  return { value: out, errors };
}

/** Errors of a `currencyRates` setting: ISO codes, positive finite rates. */
function currencyRateErrors(value: CurrencyRates): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof value !== 'object' || value === null)
    return [{ field: 'currencyRates', message: 'must be an object' }];
  if (typeof value.base !== 'string' || !isCurrencyCode(value.base))
    errors.push({ field: 'currencyRates.base', message: 'must be an ISO 4217 currency code' });
  if (typeof value.rates !== 'object' || value.rates === null || Array.isArray(value.rates)) {
    errors.push({ field: 'currencyRates.rates', message: 'must be an object of code -> rate' });
    return errors;
  }
  for (const [code, rate] of Object.entries(value.rates)) {
    if (!isCurrencyCode(code))
      errors.push({ field: `currencyRates.rates.${code}`, message: 'not an ISO 4217 currency code' });
    else if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0)
      errors.push({ field: `currencyRates.rates.${code}`, message: 'must be a positive number' });
  }
  for (const key of Object.keys(value)) {
    if (key !== 'base' && key !== 'rates')
      errors.push({ field: `currencyRates.${key}`, message: 'unknown field' });
  }
  return errors;
}

function normaliseRates(value: CurrencyRates | null): CurrencyRates | null {
  return value === null ? null : { base: value.base, rates: { ...value.rates } };
}

/** Workspace BOM settings (section 2.10, 4.7): numbering rules and domain templates. */
export class BomSettingsService {
  constructor(private readonly dataSource: DataSource) {}

  /** The stored rules, or the defaults (no numbering rules, the templates of section 2.10). */
  async rules(workspace: WorkspaceScope): Promise<PartRules> {
    const row = await workspace.repo(BomSettingsEntity).findOne({});
    return row
      ? { numberingRules: row.numberingRules, domainTemplates: row.domainTemplates }
      : { numberingRules: {}, domainTemplates: DEFAULT_DOMAIN_TEMPLATES };
  }

  async get(access: WorkspaceScope): Promise<BomSettings> {
    const row = await access.in(this.dataSource.manager).repo(BomSettingsEntity).findOne({});
    if (!row) {
      return {
        workspace: access.name,
        numberingRules: {},
        domainTemplates: DEFAULT_DOMAIN_TEMPLATES,
        currencyRates: null,
        updatedAt: null,
        updatedBy: null,
      };
    }
    const names = await usernames(this.dataSource.manager, [row.updatedBy]);
    return {
      workspace: access.name,
      numberingRules: row.numberingRules,
      domainTemplates: row.domainTemplates,
      currencyRates: row.currencyRates,
      updatedAt: row.updatedAt.toISOString(),
      updatedBy: names.get(row.updatedBy) ?? null,
    };
  }

  /** Manager+ (the route checks it). Each field given replaces the stored one whole. */
  async update(actor: CollabUserEntity, access: WorkspaceScope, request: UpdateBomSettingsRequest) {
    const errors: FieldError[] = [];
    const rules = request.numberingRules
      ? perDomain('numberingRules', request.numberingRules, numberingRuleErrors, (item) => {
          const { prefix, width } = item as NumberingRule;
          return { prefix, width };
        })
      : undefined;
    const templates = request.domainTemplates
      ? perDomain('domainTemplates', request.domainTemplates, domainTemplateErrors, (item) => {
          const t = item as DomainTemplate;
          return {
            required: t.required,
            enforce: t.enforce ?? true,
            ...(t.schema ? { schema: t.schema } : {}),
          };
        })
      : undefined;
    errors.push(...(rules?.errors ?? []), ...(templates?.errors ?? []));
    if (request.currencyRates !== undefined && request.currencyRates !== null)
      errors.push(...currencyRateErrors(request.currencyRates));
    if (errors.length > 0) throw new ValidationError('Invalid BOM settings', errors);

    await this.dataSource.transaction(async (manager) => {
      const current = await this.rules(access.in(manager));
      const stored = await access.in(manager).repo(BomSettingsEntity).findOne({});
      const rates =
        request.currencyRates === undefined
          ? (stored?.currencyRates ?? null)
          : normaliseRates(request.currencyRates);
      // An upsert: the scope's repository has no ON CONFLICT, and the row's key is the workspace.
      await manager.query(
        `INSERT INTO bom_settings (workspace_id, numbering_rules, domain_templates, updated_by, updated_at, currency_rates)
         VALUES ($1, $2, $3, $4, now(), $5)
         ON CONFLICT (workspace_id) DO UPDATE SET numbering_rules = EXCLUDED.numbering_rules,
           domain_templates = EXCLUDED.domain_templates, updated_by = EXCLUDED.updated_by, updated_at = now(),
           currency_rates = EXCLUDED.currency_rates`,
        [
          access.id,
          JSON.stringify(rules?.value ?? current.numberingRules),
          JSON.stringify(templates?.value ?? current.domainTemplates),
          actor.id,
          rates === null ? null : JSON.stringify(rates),
        ],
      );
    });
    return this.get(access);
  }
}
