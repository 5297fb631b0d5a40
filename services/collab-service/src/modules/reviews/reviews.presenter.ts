import type { DesignReview, ReviewTask, ReviewTemplate, Task } from '@hwp/contracts';
import type { ReviewRow, ReviewTaskRow, ReviewTemplateRow } from './reviews.repository';
import type { TaskRow } from './tasks.repository';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentReview(
  workspace: { name: string },
  r: ReviewRow,
  tasks: ReviewTaskRow[] = [],
): DesignReview {
  return {
    id: r.id,
    workspace: workspace.name,
    path: r.path,
    versionId: r.versionId,
    reviewerEmail: r.reviewerEmail,
    reviewer: r.reviewer,
    message: r.message,
    dueAt: iso(r.dueAt),
    status: r.status,
    templateId: r.templateId,
    createdBy: r.createdByName,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    tasks: tasks.map(presentReviewTask),
  };
}

export function presentReviewTask(row: ReviewTaskRow): ReviewTask {
  return {
    id: row.id,
    reviewId: row.reviewId,
    title: row.title,
    description: row.description,
    status: row.status,
    dueAt: iso(row.dueAt),
    sortIndex: row.sortIndex,
    createdBy: row.createdByName,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function presentTemplate(r: ReviewTemplateRow): ReviewTemplate {
  return {
    id: r.id,
    name: r.name,
    message: r.message,
    checklist: r.checklist,
    createdBy: r.createdByName,
    createdAt: r.createdAt.toISOString(),
  };
}

export function presentTask(workspace: { name: string }, r: TaskRow): Task {
  return {
    id: r.id,
    workspace: workspace.name,
    path: r.path,
    title: r.title,
    description: r.description,
    ownerEmail: r.ownerEmail,
    owner: r.owner,
    dueAt: iso(r.dueAt),
    status: r.status,
    sortIndex: r.sortIndex,
    createdBy: r.createdByName,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}
