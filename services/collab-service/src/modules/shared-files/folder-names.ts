import { queryRows } from '@hwp/platform';
import type { EntityManager } from 'typeorm';

/*
 * Unscoped by design: a folder is named by its owner's username in every workspace
 * (`<workspace>/<username>/`), so whether a name is taken by files is a question about all
 * workspaces, asked by identity before a username is given out or changed (a name that files are
 * under would open them to its new holder). These read names only, never a file.
 */

/** Usernames that files are under in any workspace: `base` itself and `base-<anything>`. */
export async function folderNamesAcrossWorkspaces(manager: EntityManager, base: string): Promise<string[]> {
  const rows = await queryRows<{ username: string }>(
    manager,
    `SELECT DISTINCT username FROM shared_files WHERE username = $1 OR username LIKE $2 ESCAPE '\\'`,
    [base, `${base.replace(/[\\%_]/g, (c) => `\\${c}`)}-%`],
  );
  return rows.map((r) => r.username);
}

/** Whether files are under any of the usernames, in any workspace (live or in the trash). */
export async function namesFoldersAcrossWorkspaces(
  manager: EntityManager,
  usernames: string[],
): Promise<boolean> {
  const rows = await queryRows(manager, 'SELECT 1 FROM shared_files WHERE username = ANY($1) LIMIT 1', [
    usernames,
  ]);
  return rows.length > 0;
}
