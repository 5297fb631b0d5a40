import type { PartVersionStatus } from '@hwp/contracts';
import { ConflictError } from '@hwp/platform';

/**
 * The approval flow of part versions and BOMs (DECISIONS.md section 5): which status each action
 * starts from and leads to. draft -submit-> in_review -approve-> approved; in_review -reject->
 * rejected -edit-> draft. Approved is immutable.
 */
export const MOVES = {
  submit: { from: ['draft'], to: 'in_review' },
  approve: { from: ['in_review'], to: 'approved' },
  reject: { from: ['in_review'], to: 'rejected' },
  // Editing a rejected version returns it to draft; approved ones are immutable.
  edit: { from: ['draft', 'rejected'], to: 'draft' },
} as const satisfies Record<string, { from: readonly PartVersionStatus[]; to: PartVersionStatus }>;
export type Move = keyof typeof MOVES;

export const PAST: Record<Move, string> = {
  submit: 'submitted',
  approve: 'approved',
  reject: 'rejected',
  edit: 'updated',
};

/** 409 unless `move` is allowed from `status`; `what` names the record (`version B`, `BOM rev A`). */
export function checkMove(status: PartVersionStatus, move: Move, what: string, newer: string): void {
  if ((MOVES[move].from as readonly PartVersionStatus[]).includes(status)) return;
  const subject = what.charAt(0).toUpperCase() + what.slice(1);
  const detail =
    status === 'approved'
      ? `${subject} is approved and cannot change; create a new ${newer}`
      : `Cannot ${move} ${what} while it is ${status}`;
  throw new ConflictError(detail, { status });
}
