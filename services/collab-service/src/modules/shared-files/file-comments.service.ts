import {
  type FileComment,
  type FileCommentList,
  type NotificationRequestedData,
  RoutingKeys,
} from '@hwp/contracts';
import { type Bus, currentContext } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import type { WorkspaceScope } from '../workspace-access/workspace-scope';
import { FileCommentsRepository } from './file-comments.repository';
import type { FileEvents } from './file-guards';
import { parsePath, pathOf } from './file-paths';
import type { SharedFileCommentEntity } from './shared-file.entity';

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
    const rows = await new FileCommentsRepository(access.in(this.dataSource.manager)).onPath(
      pathOf(parsePath(path)),
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
    const comments = new FileCommentsRepository(access.in(manager));
    const named = mentionsIn(body);
    const members = await comments.members(named);
    const mentions = named.filter((name) => members.some((m) => m.username === name));
    const row = await comments.add({
      path,
      authorId: actor.id,
      authorUsername: actor.username,
      body,
      mentions,
    });
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

function present(row: SharedFileCommentEntity): FileComment {
  return {
    id: row.id,
    path: row.path,
    author: row.authorUsername,
    body: row.body,
    mentions: row.mentions,
    createdAt: row.createdAt.toISOString(),
  };
}
