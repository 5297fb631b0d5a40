import {
  type ImportRowProblem,
  PART_LIFECYCLE_MOVES,
  type PartDomain,
  type PartLifecycle,
  type WorkspaceRole,
} from '@hwp/contracts';
import type { PartRules } from '../bom-settings.service';
import { checkAttributes, numberingPattern, PART_EDITABLE_FIELDS } from '../part-rules';
import type { PatternBudget } from '../patterns/linear-regexp';
import type { PartImportField } from './header-aliases';
import type { PartRow, PartRowValues } from './part-rows';

/** A stored part as the import compares it (read with raw SQL: `version` is `updated_at` as text). */
export interface StoredPart {
  id: string;
  partNumber: string;
  name: string;
  description: string;
  domain: PartDomain;
  uom: string;
  lifecycle: PartLifecycle;
  tags: string[];
  attributes: Record<string, unknown>;
  manufacturerName: string | null;
  manufacturerPartNumber: string | null;
  unitCost: number | null;
  currency: string | null;
  rohsCompliant: boolean | null;
  reachCompliant: boolean | null;
  conflictMinerals: string | null;
  /** `updated_at::text`: an update applies only while the row still has it. */
  version: string;
}

/** The fields an import row may change: those of PATCH, and the lifecycle. */
export const IMPORTED_FIELDS = [
  ...PART_EDITABLE_FIELDS,
  'lifecycle',
] as const satisfies readonly (keyof PartRowValues & keyof StoredPart)[];

export type PartFieldValues = Pick<StoredPart, (typeof IMPORTED_FIELDS)[number]>;

export type PlannedRow =
  | { kind: 'create'; row: number; partNumber: string; part: PartFieldValues }
  | {
      kind: 'update';
      row: number;
      stored: StoredPart;
      part: PartFieldValues;
      changes: Record<string, { from: unknown; to: unknown }>;
    }
  | { kind: 'unchanged'; row: number };

export interface PlanContext {
  rules: PartRules;
  role: WorkspaceRole;
  /** The column a field is read from, as the file names it (or the field's name). */
  column(field: PartImportField): string;
  /** Template pattern work left to the whole import (each row is bounded on its own too). */
  patternBudget?: PatternBudget;
}

/** What a new part has where its row is blank (shared and frozen: only ever serialised). */
export const NEW_PART: Readonly<PartFieldValues> = Object.freeze({
  name: '',
  description: '',
  domain: 'other',
  uom: 'each',
  lifecycle: 'prototype',
  tags: Object.freeze([]) as unknown as string[],
  attributes: Object.freeze({}),
  manufacturerName: null,
  manufacturerPartNumber: null,
  unitCost: null,
  currency: null,
  rohsCompliant: null,
  reachCompliant: null,
  conflictMinerals: null,
});

const canManage = (role: WorkspaceRole) => role === 'manager' || role === 'owner';

/** JSON with object keys sorted: jsonb does not keep key order, so equality must ignore it. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * What one checked row does against the stored part of the same number (if any): create it,
 * update it, or nothing. Errors refuse the row: a new part without a name or outside the domain's
 * numbering rule, template errors (mechanical required attributes, the electrical JSON Schema, CAS
 * check digits), lifecycle moves outside DECISIONS.md section 5 or without the manager role.
 * Template gaps of domains that do not enforce them (electronic) are warnings.
 */
export function planRow(
  row: PartRow,
  stored: StoredPart | undefined,
  context: PlanContext,
): { planned?: PlannedRow; errors: ImportRowProblem[]; warnings: ImportRowProblem[] } {
  const errors: ImportRowProblem[] = [];
  const warnings: ImportRowProblem[] = [];
  const problem = (list: ImportRowProblem[], field: PartImportField, message: string) =>
    list.push({ row: row.row, column: context.column(field), message });
  const given = row.values;

  // A stored part's values with the given ones over them, and what changed (for its history). A new
  // part is the row's own values object with defaults filled in (a large import makes 100,000).
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  let part: PartFieldValues;
  if (stored) {
    part = pickFields(stored);
    for (const field of IMPORTED_FIELDS) {
      const value = given[field];
      if (value === undefined || canonical(value) === canonical(part[field])) continue;
      changes[field] = { from: part[field], to: value };
      (part as Record<string, unknown>)[field] = value;
    }
  } else {
    const values = given as unknown as Record<string, unknown>;
    for (const field of IMPORTED_FIELDS) values[field] ??= NEW_PART[field];
    part = values as unknown as PartFieldValues;
  }

  if (!stored) {
    if (!given.name) problem(errors, 'name', 'A new part needs a name');
    const rule = context.rules.numberingRules[part.domain];
    if (rule && !numberingPattern(rule).test(given.partNumber)) {
      problem(
        errors,
        'partNumber',
        `Does not follow the ${part.domain} numbering rule (${rule.prefix} + ${rule.width} digits)`,
      );
    }
    if (part.lifecycle !== 'prototype' && !canManage(context.role)) {
      problem(errors, 'lifecycle', `Creating a part as ${part.lifecycle} needs the manager role`);
    }
  } else if (changes.lifecycle) {
    const from = stored.lifecycle;
    if (!canManage(context.role))
      problem(errors, 'lifecycle', 'Changing the lifecycle needs the manager role');
    else if (!PART_LIFECYCLE_MOVES[from].includes(part.lifecycle)) {
      const allowed = PART_LIFECYCLE_MOVES[from].join(', ') || 'none (obsolete is final)';
      problem(
        errors,
        'lifecycle',
        `A part cannot move from ${from} to ${part.lifecycle} (allowed: ${allowed})`,
      );
    }
  }

  // Like PATCH: a stored part is held to its template only when its domain or attributes change.
  const template = checkAttributes(
    context.rules.domainTemplates[part.domain],
    part.attributes,
    context.patternBudget,
  );
  if (!stored || changes.domain || changes.attributes) {
    for (const e of template.errors)
      problem(
        errors,
        'attributes',
        `${e.field.replace(/^attributes\./, '')}: ${e.message} for a ${part.domain} part`,
      );
  }
  for (const w of template.warnings)
    problem(
      warnings,
      'attributes',
      `${w.field.replace(/^attributes\./, '')} is missing (${part.domain} template)`,
    );

  if (errors.length > 0) return { errors, warnings };
  if (!stored)
    return {
      planned: { kind: 'create', row: row.row, partNumber: given.partNumber, part },
      errors,
      warnings,
    };
  if (Object.keys(changes).length === 0)
    return { planned: { kind: 'unchanged', row: row.row }, errors, warnings };
  return { planned: { kind: 'update', row: row.row, stored, part, changes }, errors, warnings };
}

function pickFields(stored: StoredPart): PartFieldValues {
  const out = {} as Record<string, unknown>;
  for (const field of IMPORTED_FIELDS) out[field] = stored[field];
  return out as PartFieldValues;
}
