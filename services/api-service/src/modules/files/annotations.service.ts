import {
  ANNOTATION_MOVES,
  type Annotation,
  type AnnotationList,
  type AnnotationStatus,
  type CreateAnnotationRequest,
  DEFAULT_PAGE_SIZE,
  type PageQuery,
} from '@hwp/contracts';
import { ConflictError, ForbiddenError, NotFoundError, newId } from '@hwp/platform';
import { type DataSource, In } from 'typeorm';
import type { ResolvedTenant } from '../tenancy/tenant-context';
import { FileAnnotationEntity, FileAnnotationReplyEntity } from './file.entity';
import { may } from './file-permissions';
import type { FilesService } from './files.service';

const DEFAULT_COLOR = '#ff3b30';

function present(row: FileAnnotationEntity, replies: FileAnnotationReplyEntity[]): Annotation {
  return {
    id: row.id,
    file_id: row.fileId,
    user_id: row.userId,
    created_at: row.createdAt.toISOString(),
    text: row.text,
    position: row.position,
    target: row.target,
    color: row.color,
    status: row.status,
    revision_id: row.revisionId,
    replies: replies.map((r) => ({
      id: r.id,
      user_id: r.userId,
      created_at: r.createdAt.toISOString(),
      text: r.text,
    })),
  };
}

/**
 * Annotations on a file (section 2.5): anyone who may view the file may annotate and reply; the
 * author and those who may edit the file move the status (DECISIONS.md section 5).
 */
export class AnnotationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly files: FilesService,
  ) {}

  private async withReplies(tenant: ResolvedTenant, rows: FileAnnotationEntity[]): Promise<Annotation[]> {
    const replies = rows.length
      ? await tenant.scope.repo(FileAnnotationReplyEntity).find({
          where: { annotationId: In(rows.map((r) => r.id)) },
          order: { createdAt: 'ASC', id: 'ASC' },
        })
      : [];
    return rows.map((row) =>
      present(
        row,
        replies.filter((r) => r.annotationId === row.id),
      ),
    );
  }

  private async annotation(
    tenant: ResolvedTenant,
    fileId: string,
    id: string,
  ): Promise<FileAnnotationEntity> {
    const row = await tenant.scope.repo(FileAnnotationEntity).findOne({ id, fileId });
    if (!row) throw new NotFoundError('Annotation not found');
    return row;
  }

  async create(
    tenant: ResolvedTenant,
    userId: string,
    fileId: string,
    input: CreateAnnotationRequest,
  ): Promise<Annotation> {
    const { file, revision } = await this.files.open(tenant, userId, fileId);
    const row = await tenant.scope.repo(FileAnnotationEntity).insert({
      id: newId(),
      fileId: file.id,
      revisionId: revision.id,
      userId,
      text: input.text,
      position: { x: input.position.x, y: input.position.y, z: input.position.z },
      target: input.target
        ? {
            type: input.target.type,
            ...(input.target.component_id ? { component_id: input.target.component_id } : {}),
          }
        : { type: 'point' },
      color: input.color?.toLowerCase() ?? DEFAULT_COLOR,
      status: input.status ?? 'open',
      createdAt: new Date(),
    });
    return present(row, []);
  }

  async list(
    tenant: ResolvedTenant,
    userId: string,
    fileId: string,
    query: PageQuery,
  ): Promise<AnnotationList> {
    const { file } = await this.files.open(tenant, userId, fileId);
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const [rows, total] = await tenant.scope.repo(FileAnnotationEntity).findAndCount({
      where: { fileId: file.id },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: (page - 1) * pageSize,
      take: pageSize,
    });
    return { items: await this.withReplies(tenant, rows), total, page, pageSize };
  }

  async reply(
    tenant: ResolvedTenant,
    userId: string,
    fileId: string,
    id: string,
    text: string,
  ): Promise<Annotation> {
    await this.files.open(tenant, userId, fileId);
    const row = await this.annotation(tenant, fileId, id);
    await tenant.scope.repo(FileAnnotationReplyEntity).insert({
      id: newId(),
      annotationId: row.id,
      userId,
      text,
      createdAt: new Date(),
    });
    const [annotation] = await this.withReplies(tenant, [row]);
    return annotation;
  }

  /** `open <-> in-progress -> resolved -> open`; any other move is 409. */
  async move(
    tenant: ResolvedTenant,
    userId: string,
    fileId: string,
    id: string,
    status: AnnotationStatus,
  ): Promise<Annotation> {
    const { file } = await this.files.open(tenant, userId, fileId);
    const actor = await this.files.actor(userId, tenant);
    return this.dataSource.transaction(async (manager) => {
      const scope = tenant.scope.in(manager);
      const annotations = scope.repo(FileAnnotationEntity);
      const row = await annotations.findOne({ id, fileId: file.id }, { lock: true });
      if (!row) throw new NotFoundError('Annotation not found');
      if (row.userId !== userId && !may(file, actor, 'edit')) {
        throw new ForbiddenError('Only the author or someone who may edit the file changes its status');
      }
      if (row.status !== status) {
        if (!ANNOTATION_MOVES[row.status].includes(status)) {
          throw new ConflictError(`An annotation cannot move from ${row.status} to ${status}`, {
            status: row.status,
            allowed: ANNOTATION_MOVES[row.status],
          });
        }
        await annotations.update({ id: row.id }, { status });
        row.status = status;
      }
      const [annotation] = await this.withReplies({ ...tenant, scope }, [row]);
      return annotation;
    });
  }
}
