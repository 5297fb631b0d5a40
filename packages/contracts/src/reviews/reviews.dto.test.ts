import { refused } from '../test-support/refused';
import { CreateReviewTemplateRequest } from './reviews.dto';
import { UpdateTaskRequest } from './tasks.dto';
import { WorkspaceReviewsQuery, WorkspaceTasksQuery } from './workspace-reviews.dto';

describe('review and task requests', () => {
  test('a task update clears its owner or due date with null, and checks them when given', () => {
    expect(refused(UpdateTaskRequest, { ownerEmail: null, dueAt: null })).toEqual([]);
    expect(
      refused(UpdateTaskRequest, { ownerEmail: 'ada@example.com', dueAt: '2026-12-01T12:00:00Z' }),
    ).toEqual([]);
    expect(refused(UpdateTaskRequest, { ownerEmail: 'ada' })).toEqual(['ownerEmail']);
    expect(refused(UpdateTaskRequest, { dueAt: 'next friday' })).toEqual(['dueAt']);
    expect(refused(UpdateTaskRequest, { title: '' })).toEqual(['title']);
    expect(refused(UpdateTaskRequest, { sortIndex: -1 })).toEqual(['sortIndex']);
    expect(refused(UpdateTaskRequest, { status: 'in_review' })).toEqual(['status']); // a review status, not a task's
  });

  test('workspace lists: all or one status of their own kind, 1 to 500 at a time', () => {
    expect(refused(WorkspaceReviewsQuery, { workspace: 'w', status: 'all', limit: '500' }, 'query')).toEqual(
      [],
    );
    expect(refused(WorkspaceReviewsQuery, { workspace: 'w', status: 'in_review' }, 'query')).toEqual([]);
    expect(refused(WorkspaceReviewsQuery, { workspace: 'w', status: 'done' }, 'query')).toEqual(['status']);
    expect(refused(WorkspaceTasksQuery, { workspace: 'w', status: 'done' }, 'query')).toEqual([]);
    expect(refused(WorkspaceTasksQuery, { workspace: 'w', status: 'in_review' }, 'query')).toEqual([
      'status',
    ]);
    expect(refused(WorkspaceTasksQuery, { workspace: 'w', limit: '0' }, 'query')).toEqual(['limit']);
    expect(refused(WorkspaceTasksQuery, { workspace: 'w', limit: '501' }, 'query')).toEqual(['limit']);
  });

  test('a template checklist: up to 100 items, none empty', () => {
    const template = (checklist: unknown) => refused(CreateReviewTemplateRequest, { name: 'DFM', checklist });
    expect(template(['Tolerances', 'Materials'])).toEqual([]);
    expect(template([])).toEqual([]);
    expect(template(['Tolerances', ''])).toEqual(['checklist']);
    expect(template(Array(101).fill('x'))).toEqual(['checklist']);
    expect(template('Tolerances')).toEqual(['checklist']);
  });
});
