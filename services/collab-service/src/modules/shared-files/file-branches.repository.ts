import { newId, queryRows } from '@hwp/platform';
import type { WorkspaceScope, WorkspaceScopedRepository } from '../workspace-access/workspace-scope';
import { SharedFileBranchEntity } from './shared-file.entity';

/** A live branch as listed: its row and its creator's username. */
export interface BranchRow {
  id: string;
  username: string;
  base: string;
  name: string;
  file_id: string;
  suffix_file: boolean;
  base_version_id: string | null;
  created_by_username: string;
  created_at: Date;
}

const BRANCH_COLUMNS = 'id, username, base, name, file_id, suffix_file, base_version_id, created_at';

/**
 * The branches of one workspace's files: reads with their creator's name and the insert as SQL in
 * the scope's workspace, single-row changes through the scope's repository.
 */
export class FileBranchesRepository {
  private readonly branches: WorkspaceScopedRepository<SharedFileBranchEntity>;

  constructor(readonly scope: WorkspaceScope) {
    this.branches = scope.repo(SharedFileBranchEntity);
  }

  /** The live branches of a file, by name. */
  of(username: string, base: string): Promise<BranchRow[]> {
    return queryRows<BranchRow>(
      this.scope.manager,
      `SELECT b.id, b.username, b.base, b.name, b.file_id, b.suffix_file, b.base_version_id, b.created_at,
              u.username AS created_by_username
         FROM shared_file_branches b JOIN collab_users u ON u.id = b.created_by
        WHERE b.workspace_id = $1 AND b.username = $2 AND b.base = $3 AND b.deleted_at IS NULL ORDER BY b.name`,
      [this.scope.id, username, base],
    );
  }

  async add(branch: {
    username: string;
    base: string;
    name: string;
    fileId: string;
    suffixFile: boolean;
    baseVersionId: string;
    createdBy: { id: string; username: string };
  }): Promise<BranchRow> {
    const [row] = await queryRows<BranchRow>(
      this.scope.manager,
      `INSERT INTO shared_file_branches (id, workspace_id, username, base, name, file_id, suffix_file, base_version_id, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       RETURNING ${BRANCH_COLUMNS}, $10::text AS created_by_username`,
      [
        newId(),
        this.scope.id,
        branch.username,
        branch.base,
        branch.name,
        branch.fileId,
        branch.suffixFile,
        branch.baseVersionId,
        branch.createdBy.id,
        branch.createdBy.username,
      ],
    );
    return row;
  }

  async markDeleted(branch: BranchRow): Promise<void> {
    await this.branches.update({ id: branch.id }, { deletedAt: new Date() });
  }

  /** A merge moves the branch point to the version it wrote. */
  async setBaseVersion(branch: BranchRow, versionId: string): Promise<void> {
    await this.branches.update({ id: branch.id }, { baseVersionId: versionId });
  }
}
