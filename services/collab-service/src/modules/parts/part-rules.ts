import type { DomainTemplate, FieldError, NumberingRule, PartDomain } from '@hwp/contracts';
import Ajv, { type ValidateFunction } from 'ajv';
import {
  linearRegExpEngine,
  type PatternBudget,
  PatternBudgetError,
  withPatternBudget,
} from './patterns/linear-regexp';
import { schemaPatternErrors } from './patterns/schema-patterns';

/** Pure rules of parts: templates, numbering, currency and CAS numbers. */

/** The fields PATCH (and an import row) may change besides lifecycle, in the order the history lists them. */
export const PART_EDITABLE_FIELDS = [
  'name',
  'description',
  'domain',
  'uom',
  'tags',
  'attributes',
  'manufacturerName',
  'manufacturerPartNumber',
  'unitCost',
  'currency',
  'rohsCompliant',
  'reachCompliant',
  'conflictMinerals',
] as const;

/** Domain templates of section 2.10, used until a manager stores others. */
export const DEFAULT_DOMAIN_TEMPLATES: Record<PartDomain, DomainTemplate> = {
  mechanical: { required: ['material', 'finish', 'tolerance'], enforce: true },
  // Import reports these as warnings (section 2.10); create and update accept parts without them.
  electronic: { required: ['package', 'value', 'voltage_rating'], enforce: false },
  electrical: {
    required: ['wire_gauge', 'connector_type', 'voltage'],
    enforce: false,
    schema: {
      type: 'object',
      required: ['wire_gauge', 'connector_type', 'voltage'],
      properties: {
        wire_gauge: { type: ['string', 'number'] },
        connector_type: { type: 'string', minLength: 1 },
        voltage: { type: ['string', 'number'] },
      },
    },
  },
  chemical: { required: ['cas_number', 'concentration', 'hazard_class'], enforce: false },
  other: { required: [], enforce: false },
};

// Stored templates come from managers: their patterns run on RE2 (re2js, linear time; DECISIONS.md
// section 0), never on the backtracking RegExp, so no pattern can stall the event loop.
const ajv = new Ajv({
  allErrors: true,
  strict: false,
  unicodeRegExp: true,
  code: { regExp: linearRegExpEngine },
});
const compiled = new Map<string, ValidateFunction>();
/** The validator of each schema object seen (schemas are parsed from stored rules and never changed). */
const compiledObjects = new WeakMap<object, ValidateFunction>();
/** Characters one part's attributes may have checked against patterns (tens of ms at most on RE2). */
const PATTERN_CHARS_PER_PART = 50_000;

/** Compiles (once per distinct schema) a template's JSON Schema; throws on an invalid schema. */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  // The same schema object comes back for every row of an import: known without serialising it.
  const known = compiledObjects.get(schema);
  if (known) return known;
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  compiledObjects.set(schema, validate);
  return validate;
}

/** The template's validator; a stored schema that no longer compiles is an error on the part, not a 500. */
function validatorOf(schema: Record<string, unknown>, errors: FieldError[]): ValidateFunction | null {
  try {
    return compileSchema(schema);
  } catch (error) {
    errors.push({
      field: 'attributes',
      message: `the workspace's template for this domain cannot be applied (${(error as Error).message}); a manager must store it again`,
    });
    return null;
  }
}

function validAttributes(
  validate: ValidateFunction,
  attributes: object,
  errors: FieldError[],
  shared: PatternBudget | undefined,
): boolean {
  const allowed = Math.min(PATTERN_CHARS_PER_PART, shared?.left ?? PATTERN_CHARS_PER_PART);
  const budget: PatternBudget = { left: allowed };
  try {
    return withPatternBudget(budget, () => validate(attributes)) as boolean;
  } catch (error) {
    if (!(error instanceof PatternBudgetError)) throw error;
    validate.errors = null;
    errors.push({ field: 'attributes', message: "too long to check against the template's patterns" });
    return false;
  } finally {
    if (shared) shared.left -= allowed - Math.max(budget.left, 0);
  }
}

const isMissing = (value: unknown) =>
  value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/**
 * What a template says about a part's attributes: `errors` refuse the write, `warnings` do not.
 * Pattern work is bounded per part, and by `patternBudget` across many (an import).
 */
export function checkAttributes(
  template: DomainTemplate | undefined,
  attributes: Record<string, unknown>,
  patternBudget?: PatternBudget,
): { errors: FieldError[]; warnings: FieldError[] } {
  const errors: FieldError[] = [];
  const warnings: FieldError[] = [];
  if (template) {
    for (const name of template.required) {
      if (isMissing(attributes[name])) {
        (template.enforce ? errors : warnings).push({ field: `attributes.${name}`, message: 'required' });
      }
    }
    if (template.schema) {
      const validate = validatorOf(template.schema, errors);
      if (validate && !validAttributes(validate, attributes, errors, patternBudget)) {
        for (const e of validate.errors ?? []) {
          const missing = (e.params as { missingProperty?: string }).missingProperty;
          const path = missing ? `/${missing}` : e.instancePath;
          const field = `attributes${path.replaceAll('/', '.')}`;
          if (!errors.some((x) => x.field === field)) {
            errors.push({ field, message: missing ? 'required' : (e.message ?? 'invalid') });
          }
        }
      }
    }
  }
  const cas = attributes.cas_number;
  if (!isMissing(cas) && !isValidCasNumber(String(cas))) {
    errors.push({ field: 'attributes.cas_number', message: 'not a valid CAS registry number (check digit)' });
  }
  return { errors, warnings };
}

/**
 * A CAS registry number `NNNNNNN-NN-N`: the last digit is the sum of the other digits, each
 * times its position counted from the right (1-based), modulo 10.
 */
export function isValidCasNumber(value: string): boolean {
  const match = /^(\d{2,7})-(\d{2})-(\d)$/.exec(value.trim());
  if (!match) return false;
  const digits = `${match[1]}${match[2]}`;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) sum += Number(digits[digits.length - 1 - i]) * (i + 1);
  return sum % 10 === Number(match[3]);
}

let currencies: Set<string> | undefined;

/** ISO 4217 codes as the runtime knows them. */
export function isCurrencyCode(code: string): boolean {
  currencies ??= new Set(Intl.supportedValuesOf('currency'));
  return currencies.has(code);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The pattern a given part number must match under a numbering rule. */
export function numberingPattern(rule: NumberingRule): RegExp {
  return new RegExp(`^${escapeRegExp(rule.prefix)}\\d{${rule.width}}$`);
}

export function formatPartNumber(rule: NumberingRule, sequence: number): string {
  return `${rule.prefix}${String(sequence).padStart(rule.width, '0')}`;
}

/** Validates stored-settings input; returns field errors (empty when fine). */
export function numberingRuleErrors(domain: string, rule: unknown): FieldError[] {
  const field = `numberingRules.${domain}`;
  const r = rule as Partial<NumberingRule> | null;
  if (typeof r !== 'object' || r === null) return [{ field, message: 'must be { prefix, width }' }];
  const errors: FieldError[] = [];
  if (typeof r.prefix !== 'string' || !/^[A-Za-z0-9._/#+-]{0,20}$/.test(r.prefix)) {
    errors.push({ field: `${field}.prefix`, message: 'up to 20 letters, digits or . _ / # + -' });
  }
  if (!Number.isInteger(r.width) || (r.width as number) < 1 || (r.width as number) > 12) {
    errors.push({ field: `${field}.width`, message: 'an integer from 1 to 12' });
  }
  const extra = Object.keys(r).filter((k) => k !== 'prefix' && k !== 'width');
  if (extra.length > 0) errors.push({ field, message: `unknown fields: ${extra.join(', ')}` });
  return errors;
}

/** Validates a template given in the settings; a schema must compile. */
export function domainTemplateErrors(domain: string, template: unknown): FieldError[] {
  const field = `domainTemplates.${domain}`;
  const t = template as Partial<DomainTemplate> | null;
  if (typeof t !== 'object' || t === null)
    return [{ field, message: 'must be { required, enforce, schema? }' }];
  const errors: FieldError[] = [];
  if (!Array.isArray(t.required) || !t.required.every((x) => typeof x === 'string' && x.length > 0)) {
    errors.push({ field: `${field}.required`, message: 'an array of attribute names' });
  }
  if (t.enforce !== undefined && typeof t.enforce !== 'boolean') {
    errors.push({ field: `${field}.enforce`, message: 'a boolean' });
  }
  if (t.schema !== undefined) {
    if (typeof t.schema !== 'object' || t.schema === null || Array.isArray(t.schema)) {
      errors.push({ field: `${field}.schema`, message: 'a JSON Schema object' });
    } else {
      // Every pattern first (naming where each bad one is), so a catastrophic one never compiles.
      const patterns = schemaPatternErrors(t.schema, `${field}.schema`);
      if (patterns.length > 0) errors.push(...patterns);
      else {
        try {
          compileSchema(t.schema);
        } catch (error) {
          errors.push({
            field: `${field}.schema`,
            message: `invalid JSON Schema: ${(error as Error).message}`,
          });
        }
      }
    }
  }
  const extra = Object.keys(t).filter((k) => !['required', 'enforce', 'schema'].includes(k));
  if (extra.length > 0) errors.push({ field, message: `unknown fields: ${extra.join(', ')}` });
  return errors;
}
