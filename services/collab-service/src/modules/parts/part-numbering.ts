import type { FieldError, NumberingRule, PartDomain } from '@hwp/contracts';
import { ConflictError, ValidationError } from '@hwp/platform';
import type { WorkspaceAccess } from '../workspace-access/workspace-scope';
import type { PartRules } from './bom-settings.service';
import { formatPartNumber, numberingPattern } from './part-rules';
import type { PartsRepository } from './parts.repository';

/**
 * The given number (matching the domain's numbering rule, if any, and unused), or the next number
 * of the rule. The counter row's lock is held until commit, so concurrent creates queue and never
 * share a number; numbers taken by hand are skipped.
 */
export async function partNumberFor(
  parts: PartsRepository,
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
    if (await parts.numberTaken(given)) {
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
    const candidate = formatPartNumber(rule, await parts.nextNumber(domain));
    if (!numberingPattern(rule).test(candidate)) {
      throw new ConflictError(`The ${domain} numbering rule of ${access.name} has run out of numbers`);
    }
    if (!(await parts.numberTaken(candidate))) return candidate;
  }
}

/**
 * The highest sequence number new parts use under their domain's numbering rule, per domain (to
 * move the counters past with {@link advanceCounters}).
 */
export function highestSequences(
  rules: Partial<Record<PartDomain, NumberingRule>>,
  created: { partNumber: string; part: { domain: PartDomain } }[],
): Map<PartDomain, number> {
  const highest = new Map<PartDomain, number>();
  for (const c of created) {
    const rule = rules[c.part.domain];
    if (!rule) continue;
    const sequence = Number(c.partNumber.slice(rule.prefix.length));
    if (Number.isSafeInteger(sequence) && sequence > (highest.get(c.part.domain) ?? 0))
      highest.set(c.part.domain, sequence);
  }
  return highest;
}

/**
 * Moves each numbering counter past the highest sequence an import used under its rule, so the next
 * generated number is free at once instead of being found by probing one taken number at a time.
 */
export async function advanceCounters(
  parts: PartsRepository,
  highest: Map<PartDomain, number>,
): Promise<void> {
  for (const [domain, value] of highest) await parts.advanceCounter(domain, value);
}
