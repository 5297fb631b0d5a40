import type { FieldError, NumberingRule, PartDomain } from '@hwp/contracts';
import { ConflictError, ValidationError } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { WorkspaceAccess } from '../workspaces/workspace-access';
import type { PartRules } from './bom-settings.service';
import { formatPartNumber, numberingPattern } from './part-rules';

/**
 * The given number (matching the domain's numbering rule, if any, and unused), or the next number
 * of the rule. The counter row's lock is held until commit, so concurrent creates queue and never
 * share a number; numbers taken by hand are skipped.
 */
export async function partNumberFor(
  manager: EntityManager,
  access: WorkspaceAccess,
  rules: PartRules,
  domain: PartDomain,
  given: string | undefined,
): Promise<string> {
  const rule = rules.numberingRules[domain];
  if (given) {
    if (rule && !numberingPattern(rule).test(given)) {
      const example = formatPartNumber(rule, 1);
      throw new ValidationError(`partNumber must follow the ${domain} numbering rule, like ${example}`, [
        { field: 'partNumber', message: `must match ${rule.prefix} followed by ${rule.width} digits` },
      ] satisfies FieldError[]);
    }
    if (await numberTaken(manager, access.id, given)) {
      throw new ConflictError(`Part number ${given} already exists in ${access.name}`, {
        field: 'partNumber',
      });
    }
    return given;
  }
  if (!rule) {
    throw new ValidationError(`partNumber is required: ${access.name} has no numbering rule for ${domain}`, [
      { field: 'partNumber', message: 'required' },
    ]);
  }
  for (;;) {
    const [{ last_value }]: { last_value: string }[] = await manager.query(
      `INSERT INTO part_number_counters (workspace_id, domain, last_value) VALUES ($1, $2, 1)
       ON CONFLICT (workspace_id, domain) DO UPDATE SET last_value = part_number_counters.last_value + 1
       RETURNING last_value`,
      [access.id, domain],
    );
    const candidate = formatPartNumber(rule, Number(last_value));
    if (!numberingPattern(rule).test(candidate)) {
      throw new ConflictError(`The ${domain} numbering rule of ${access.name} has run out of numbers`);
    }
    if (!(await numberTaken(manager, access.id, candidate))) return candidate;
  }
}

async function numberTaken(
  manager: EntityManager,
  workspaceId: string,
  partNumber: string,
): Promise<boolean> {
  const rows: unknown[] = await manager.query(
    'SELECT 1 FROM parts WHERE workspace_id = $1 AND lower(part_number) = lower($2) LIMIT 1',
    [workspaceId, partNumber],
  );
  return rows.length > 0;
}

/**
 * Moves each numbering counter past the highest sequence an import used under its rule, so the next
 * generated number is free at once instead of being found by probing one taken number at a time.
 */
export async function advanceCounters(
  manager: EntityManager,
  workspaceId: string,
  rules: Partial<Record<PartDomain, NumberingRule>>,
  created: { partNumber: string; part: { domain: PartDomain } }[],
): Promise<void> {
  const highest = new Map<PartDomain, number>();
  for (const c of created) {
    const rule = rules[c.part.domain];
    if (!rule) continue;
    const sequence = Number(c.partNumber.slice(rule.prefix.length));
    if (Number.isSafeInteger(sequence) && sequence > (highest.get(c.part.domain) ?? 0))
      highest.set(c.part.domain, sequence);
  }
  for (const [domain, value] of highest) {
    await manager.query(
      `INSERT INTO part_number_counters (workspace_id, domain, last_value) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, domain) DO UPDATE SET last_value = GREATEST(part_number_counters.last_value, EXCLUDED.last_value)`,
      [workspaceId, domain, value],
    );
  }
}
