import { DEFAULT_PAGE_SIZE, type ListFilesQuery } from '@hwp/contracts';
import { type EntityManager, In } from 'typeorm';
import type { TenantScope, TenantScopedRepository } from '../tenancy/tenant-scope';
import { FileEntity, FileRevisionEntity } from './file.entity';

/** The visibility test of file-permissions.ts `may(view)`, as SQL on `f` for a member of the tenant. */
const VISIBLE_TO_MEMBER = `(
  :privileged OR f.created_by = :userId OR jsonb_array_length(f.permissions->'view') = 0
  OR (f.permissions->'view') ?| :ids OR (f.permissions->'edit') ?| :ids OR (f.permissions->'delete') ?| :ids
)`;

/** Files and revisions of one tenant; every query goes through the tenant's scope. */
export class FilesRepository {
  readonly files: TenantScopedRepository<FileEntity>;
  readonly revisions: TenantScopedRepository<FileRevisionEntity>;

  constructor(
    readonly scope: TenantScope,
    private readonly manager: EntityManager,
  ) {
    this.files = scope.repo(FileEntity);
    this.revisions = scope.repo(FileRevisionEntity);
  }

  findFile(id: string, lock = false): Promise<FileEntity | null> {
    return this.files.findOne({ id }, { lock });
  }

  /** The file of that name in that folder (not locked: a read). */
  findAt(folderPath: string, name: string): Promise<FileEntity | null> {
    return this.files.findOne({ folderPath, name });
  }

  /** The file of that name in that folder, locked (uploads of one name queue). */
  findByPath(folderPath: string, name: string): Promise<FileEntity | null> {
    return this.files.findOne({ folderPath, name }, { lock: true });
  }

  currentRevision(file: FileEntity): Promise<FileRevisionEntity | null> {
    return this.revisions.findOne({ id: file.currentRevisionId });
  }

  /** The current revisions of `files`, by id, in one query. */
  async currentRevisions(files: FileEntity[]): Promise<Map<string, FileRevisionEntity>> {
    if (files.length === 0) return new Map();
    const rows = await this.revisions.find({ where: { id: In(files.map((f) => f.currentRevisionId)) } });
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** One page of a file's revisions, newest first, with their count. */
  revisionsPage(fileId: string, page: number, pageSize: number): Promise<[FileRevisionEntity[], number]> {
    return this.revisions.findAndCount({
      where: { fileId },
      order: { number: 'DESC' },
      skip: (page - 1) * pageSize,
      take: pageSize,
    });
  }

  revisionsOf(fileId: string): Promise<FileRevisionEntity[]> {
    return this.revisions.find({ where: { fileId }, order: { number: 'DESC' } });
  }

  findRevision(fileId: string, id: string): Promise<FileRevisionEntity | null> {
    return this.revisions.findOne({ fileId, id });
  }

  /**
   * A page of the files a member may see, newest first, filtered and searched (`q` over the index
   * processing builds, and names).
   */
  async search(
    query: ListFilesQuery,
    viewer: { userId: string; teamIds: string[]; privileged: boolean },
    folderPath?: string,
  ): Promise<[FileEntity[], number]> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const qb = this.manager
      .createQueryBuilder(FileEntity, 'f')
      .where('f.tenant_id = :tenantId', { tenantId: this.scope.tenantId })
      .andWhere(VISIBLE_TO_MEMBER, {
        privileged: viewer.privileged,
        userId: viewer.userId,
        ids: [viewer.userId, ...viewer.teamIds],
      });
    if (folderPath !== undefined) qb.andWhere('f.folder_path = :folderPath', { folderPath });
    if (query.product_id) qb.andWhere('f.product_id = :productId', { productId: query.product_id });
    if (query.tags?.length) qb.andWhere('f.tags @> :tags', { tags: query.tags });
    const q = query.q?.trim();
    if (q) {
      qb.andWhere(
        `(f.search @@ websearch_to_tsquery('simple', :q) OR lower(f.name) LIKE :like ESCAPE '\\')`,
        { q, like: `%${q.toLowerCase().replace(/[\\%_]/g, '\\$&')}%` },
      );
    }
    return qb
      .orderBy('f.updated_at', 'DESC')
      .addOrderBy('f.id', 'DESC')
      .skip((page - 1) * pageSize)
      .take(pageSize)
      .getManyAndCount();
  }

  /** Gives a revision the indexed text of another (a revert copies its bytes, so their text too). */
  async copyText(fromRevisionId: string, toRevisionId: string): Promise<void> {
    await this.manager.query(
      `UPDATE file_revisions r SET text_content = o.text_content FROM file_revisions o
       WHERE r.id = $2 AND o.id = $1 AND r.tenant_id = $3 AND o.tenant_id = $3`,
      [fromRevisionId, toRevisionId, this.scope.tenantId],
    );
  }

  /**
   * Rebuilds a file's search vector from its fields and its current revision's metadata and text.
   * The metadata and the text are cut (100,000 and 200,000 characters) so the vector stays under
   * Postgres' 1 MB: past it the update fails and the file's processing with it.
   */
  async reindex(fileId: string): Promise<void> {
    await this.manager.query(
      `UPDATE files f SET search =
         setweight(to_tsvector('simple', coalesce(f.name, '') || ' ' || regexp_replace(f.name, '[._-]+', ' ', 'g')), 'A')
         || setweight(to_tsvector('simple', array_to_string(f.tags, ' ')), 'A')
         || setweight(to_tsvector('simple', coalesce(f.description, '')), 'B')
         || setweight(to_tsvector('simple', left(coalesce(r.metadata::text, ''), 100000) || ' ' || coalesce(r.classification, '')), 'C')
         || setweight(to_tsvector('simple', left(coalesce(r.text_content, ''), 200000)), 'D')
       FROM file_revisions r
       WHERE f.id = $1 AND f.tenant_id = $2 AND r.id = f.current_revision_id`,
      [fileId, this.scope.tenantId],
    );
  }
}
