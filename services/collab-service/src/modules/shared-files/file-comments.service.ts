import {
  type FileComment,
  type FileCommentList,
  type NotificationRequestedData,
  RoutingKeys,
} from '@hwp/contracts';
import { type Bus, currentContext, newId } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import type { FileEvents } from './file-guards';
import { parsePath, pathOf } from './file-paths';

/** `@username` tokens of a body (usernames are `[a-z0-9._-]`), in order, once each. */
export function mentionsIn(body: string): string[] {
  const found = new Set<string>();
  for (const match of body.matchAll(/(?:^|[^\w@.-])@([a-z0-9._-]{1,64})/gi))
    found.add(match[1].toLowerCase().replace(/\.+$/, ''));
  return [...found];
}

/**
 * Comments on a file path. Each `@username` of a member is a `mention` event to that user only and
 * an email through the API host's notifier; the workspace gets a `comment` event.
 */
export class FileComments {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: FileEvents,
    private readonly bus: Bus,
  ) {}

  async list(access: WorkspaceScope, path: string): Promise<FileCommentList> {
    const rows: {
      id: string;
      path: string;
      author_username: string;
      body: string;
      mentions: string[];
      created_at: Date;
    }[] = await this.dataSource.query(
      `SELECT id, path, author_username, body, mentions, created_at FROM shared_file_comments
          WHERE workspace_id = $1 AND path = $2 ORDER BY created_at, id`,
      [access.id, pathOf(parsePath(path))],
    );
    return { items: rows.map(present) };
  }

  create(actor: CollabUserEntity, access: WorkspaceScope, path: string, body: string): Promise<FileComment> {
    const canonical = pathOf(parsePath(path));
    return this.dataSource.transaction((manager) => this.post(manager, actor, access, canonical, body));
  }

  /** In the caller's transaction (force-unlock posts one too). */
  async post(
    manager: EntityManager,
    actor: CollabUserEntity,
    access: WorkspaceScope,
    path: string,
    body: string,
  ): Promise<FileComment> {
    const named = mentionsIn(body);
    const members: { id: string; username: string; email: string }[] = named.length
      ? await manager.query(
          `SELECT u.id, u.username, u.email FROM workspace_members m JOIN collab_users u ON u.id = m.user_id
            WHERE m.workspace_id = $1 AND u.username = ANY($2::text[])`,
          [access.id, named],
        )
      : [];
    const mentions = named.filter((name) => members.some((m) => m.username === name));
    const [row] = await manager.query(
      `INSERT INTO shared_file_comments (id, workspace_id, path, author_id, author_username, body, mentions)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id, path, author_username, body, mentions, created_at`,
      [newId(), access.id, path, actor.id, actor.username, body, mentions],
    );
    const comment = present(row);
    for (const member of members) {
      if (member.id === actor.id) continue;
      await this.events.emit(
        manager,
        access.ref,
        'mention',
        { commentId: comment.id, path, body, from: actor.username },
        {
          actor,
          path,
          to: { id: member.id, username: member.username },
        },
      );
      if (member.email) {
        const data: NotificationRequestedData = {
          channel: 'email',
          to: member.email,
          template: 'mention',
          subject: `${actor.username} mentioned you on ${path}`,
          text: `${actor.username} mentioned you in a comment on ${path}:\n\n${body}`,
          vars: { workspace: access.name, path, commentId: comment.id },
        };
        await this.bus.outbox.add(manager, {
          type: RoutingKeys.notificationRequested,
          workspace: access.name,
          actor: actor.id,
          correlationId: currentContext()?.requestId,
          data,
        });
      }
    }
    await this.events.emit(
      manager,
      access.ref,
      'comment',
      { action: 'created', ...comment },
      { actor, path },
    );
    return comment;
  }
}

function present(row: {
  id: string;
  path: string;
  author_username: string;
  body: string;
  mentions: string[];
  created_at: Date;
}): FileComment {
  return {
    id: row.id,
    path: row.path,
    author: row.author_username,
    body: row.body,
    mentions: row.mentions,
    createdAt: row.created_at.toISOString(),
  };
}
