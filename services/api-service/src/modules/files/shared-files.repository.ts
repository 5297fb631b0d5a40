import { DEFAULT_PAGE_SIZE, type PageQuery } from '@hwp/contracts';
import type { EntityManager } from 'typeorm';
import { FileEntity, FileRevisionEntity } from './file.entity';

/**
 * The one cross-tenant read (DECISIONS.md section 2): files of tenants the caller is not a member
 * of, whose permission lists name the caller or one of the caller's tenants (teams). Everything
 * else about files goes through a TenantScope.
 */
export class SharedFilesRepository {
  constructor(private readonly manager: EntityManager) {}

  private named(ids: string[], memberOf: string[]) {
    return this.manager
      .createQueryBuilder(FileEntity, 'f')
      .where(
        `((f.permissions->'view') ?| :ids OR (f.permissions->'edit') ?| :ids OR (f.permissions->'delete') ?| :ids)`,
        { ids },
      )
      .andWhere('NOT (f.tenant_id = ANY(:memberOf))', { memberOf });
  }

  page(ids: string[], memberOf: string[], query: PageQuery): Promise<[FileEntity[], number]> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    return this.named(ids, memberOf)
      .orderBy('f.updated_at', 'DESC')
      .addOrderBy('f.id', 'DESC')
      .skip((page - 1) * pageSize)
      .take(pageSize)
      .getManyAndCount();
  }

  one(ids: string[], memberOf: string[], fileId: string): Promise<FileEntity | null> {
    return this.named(ids, memberOf).andWhere('f.id = :fileId', { fileId }).getOne();
  }

  revision(file: FileEntity): Promise<FileRevisionEntity | null> {
    return this.manager.findOneBy(FileRevisionEntity, { id: file.currentRevisionId, fileId: file.id });
  }
}
