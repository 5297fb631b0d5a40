import type { ReviewStatus, TaskStatus } from '@hwp/contracts';
import { ConflictError } from '@hwp/platform';

/** Design review moves (DECISIONS.md 5): open -> in_review -> completed; open|in_review -> canceled; reopen. */
const REVIEW_MOVES: Record<ReviewStatus, readonly ReviewStatus[]> = {
  open: ['in_review', 'canceled'],
  in_review: ['completed', 'canceled'],
  completed: ['open'],
  canceled: ['open'],
};

/** Task and review-task moves: open <-> in_progress -> done; any but done -> canceled; done|canceled -> open. */
const TASK_MOVES: Record<TaskStatus, readonly TaskStatus[]> = {
  open: ['in_progress', 'canceled'],
  in_progress: ['open', 'done', 'canceled'],
  done: ['open'],
  canceled: ['open'],
};

function check<S extends string>(moves: Record<S, readonly S[]>, what: string, from: S, to: S): void {
  if (from === to) return;
  if (!moves[from].includes(to)) {
    throw new ConflictError(
      `A ${what} cannot go from ${from} to ${to}; from ${from}: ${moves[from].join(', ')}`,
      { status: from, allowed: [...moves[from]] },
    );
  }
}

export const checkReviewMove = (from: ReviewStatus, to: ReviewStatus) =>
  check(REVIEW_MOVES, 'review', from, to);
export const checkTaskMove = (from: TaskStatus, to: TaskStatus) => check(TASK_MOVES, 'task', from, to);

/** Reopening a finished review needs manager+. */
export const isReopen = (from: ReviewStatus, to: ReviewStatus) =>
  (from === 'completed' || from === 'canceled') && to === 'open';
