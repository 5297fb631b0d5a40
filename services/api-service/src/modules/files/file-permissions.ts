import type { FilePermissions, TenantRole } from '@hwp/contracts';
import type { FileEntity } from './file.entity';

export const NO_PERMISSIONS: FilePermissions = { view: [], edit: [], delete: [] };

/** Who asks: the user, the tenants they belong to (team ids) and their role in the file's tenant. */
export interface FileActor {
  userId: string;
  teamIds: readonly string[];
  /** Role in the file's tenant; null for a user of another tenant named in the permissions. */
  role: TenantRole | null;
}

export type FileAction = 'view' | 'edit' | 'delete';

const named = (list: readonly string[], actor: FileActor) =>
  list.includes(actor.userId) || actor.teamIds.some((id) => list.includes(id));

/**
 * The permission rule (docs/files.md): the uploader and tenant admins/owners may do everything.
 * A non-empty list limits an action to the users and teams it names (a right to edit or delete
 * includes viewing). An empty list leaves the action to roles: view and edit to every member of
 * the tenant, delete to nobody else. Users of other tenants reach a file only by being named.
 */
export function may(file: FileEntity, actor: FileActor, action: FileAction): boolean {
  if (actor.role === 'owner' || actor.role === 'admin' || file.createdBy === actor.userId) return true;
  const p = file.permissions;
  const member = actor.role !== null;
  switch (action) {
    case 'delete':
      return named(p.delete, actor);
    case 'edit':
      return (
        named(p.edit, actor) ||
        named(p.delete, actor) ||
        (member && p.edit.length === 0 && may(file, actor, 'view'))
      );
    case 'view':
      return (
        named(p.view, actor) ||
        named(p.edit, actor) ||
        named(p.delete, actor) ||
        (member && p.view.length === 0)
      );
  }
}
