import { collabMember, type Stack, startStack } from '#test/collab-test-kit';
import { createPart, createWorkspace } from '#test/factories';
import { PartEntity } from '../src/modules/parts/part.entity';
import { isWorkspaceOwned, WorkspaceScope } from '../src/modules/workspace-access/workspace-scope';
import { WorkspaceMemberEntity } from '../src/modules/workspaces/workspace.entity';

/**
 * Tables keyed by a workspace that are not read through a WorkspaceScope, and why. Anything else with
 * a `workspace_id` column must be registered workspace-owned.
 */
const NOT_SCOPED: Record<string, string> = {
  workspace_members: 'the memberships the role check reads to build a scope (across workspaces for a user)',
  invitations:
    'listed for their invitee across workspaces; written by the invitations service by workspace id',
  collab_event_counters: 'the event log: appended by CollabEvents.emit for the scope’s workspace',
  collab_event_marks:
    'the event log: the latest change of each type, written by CollabEvents.emit for the scope’s workspace',
  collab_events: 'the event log: replayed by the hub by workspace id for a stream the role check admitted',
  collab_presence: 'who holds a stream; written by the hub for a stream the role check admitted',
};

/**
 * Workspace tables read and written with SQL (no ScopedRepository yet; issue 36 asks for one each):
 * where their statements take the workspace from. Each must come from the caller's WorkspaceScope.
 */
const SQL_SCOPED: Record<string, string> = {};

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(() => stack?.stop());

describe('WorkspaceScope', () => {
  test('every entity with a workspace_id column is workspace-owned, or listed with a reason', () => {
    const keyed = stack.collab.deps.dataSource.entityMetadatas.filter((meta) =>
      meta.columns.some((c) => c.databaseName === 'workspace_id'),
    );
    const unlisted = keyed
      .filter((meta) => !isWorkspaceOwned(meta.target) && !NOT_SCOPED[meta.tableName])
      .map((meta) => meta.tableName);
    expect(unlisted).toEqual([]);
    expect(keyed.filter((meta) => isWorkspaceOwned(meta.target)).map((m) => m.tableName)).toEqual(
      expect.arrayContaining([
        'parts',
        'bom_settings',
        'part_number_counters',
        'design_reviews',
        'tasks',
        'review_templates',
        'model_translations',
        'shared_files',
        'shared_file_branches',
        'shared_file_comments',
        'shared_file_conflicts',
        'shared_file_locks',
      ]),
    );
  });

  test('every table of the database with a workspace_id column is accounted for (the catalogue)', async () => {
    // The database, not the entities: a table written with SQL only has no entity to walk.
    const rows: { table_name: string }[] = await stack.collab.deps.dataSource.query(
      `SELECT table_name FROM information_schema.columns
       WHERE table_schema = current_schema() AND column_name = 'workspace_id' ORDER BY table_name`,
    );
    const owned = new Set(
      stack.collab.deps.dataSource.entityMetadatas
        .filter((meta) => isWorkspaceOwned(meta.target))
        .map((meta) => meta.tableName),
    );
    const unaccounted = rows
      .map((row) => row.table_name)
      .filter((table) => !owned.has(table) && !NOT_SCOPED[table] && !SQL_SCOPED[table]);
    expect(unaccounted).toEqual([]);
    // A reason listed for a table that no longer exists (or is now owned) is stale.
    const tables = new Set(rows.map((row) => row.table_name));
    const stale = [...Object.keys(NOT_SCOPED), ...Object.keys(SQL_SCOPED)].filter(
      (table) => !tables.has(table) || owned.has(table),
    );
    expect(stale).toEqual([]);
  });

  test('a scope reads, counts, changes and saves only its own workspace’s rows', async () => {
    const owner = await collabMember(stack);
    const [mine, theirs] = [
      await createWorkspace(stack.collab.app, owner, 'scope-a'),
      await createWorkspace(stack.collab.app, owner, 'scope-b'),
    ];
    const ownPart = await createPart(stack.collab.app, owner, mine.name);
    const foreignPart = await createPart(stack.collab.app, owner, theirs.name, { name: 'Foreign' });
    const manager = stack.collab.deps.dataSource.manager;
    const parts = new WorkspaceScope(manager, { ...mine, role: 'owner' }).repo(PartEntity);

    expect((await parts.findOne({ id: ownPart.id }))?.partNumber).toBe(ownPart.partNumber);
    expect(await parts.findOne({ id: foreignPart.id })).toBeNull();
    expect(await parts.count()).toBe(1);
    expect((await parts.find()).map((p) => p.id)).toEqual([ownPart.id]);
    expect(await parts.update({ id: foreignPart.id }, { name: 'Taken over' })).toBe(0);
    expect(await parts.delete({ id: foreignPart.id })).toBe(0);

    const foreignRow = await manager.findOneByOrFail(PartEntity, { id: foreignPart.id });
    await expect(parts.save({ ...foreignRow, name: 'Taken over' })).rejects.toThrow(/not owned/);
    const inserted = await parts.insert({ ...foreignRow, id: crypto.randomUUID(), partNumber: 'SCOPED-1' });
    expect(inserted.workspaceId).toBe(mine.id);

    const stored = await manager.findOneByOrFail(PartEntity, { id: foreignPart.id });
    expect(stored).toMatchObject({ name: 'Foreign', workspaceId: theirs.id });
  });

  test('an entity not registered as workspace-owned gets no scoped repository', () => {
    const scope = new WorkspaceScope(stack.collab.deps.dataSource.manager, {
      id: crypto.randomUUID(),
      name: 'x',
      role: 'viewer',
    });
    expect(() => scope.repo(WorkspaceMemberEntity)).toThrow(/not registered/);
  });
});
