import { type EntityManager, In } from 'typeorm';
import { CollabUserEntity } from './collab-user.entity';

/** user id -> username, in one query (for presenters that name people). */
export async function usernames(
  manager: EntityManager,
  ids: (string | null)[],
): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Map();
  const users = await manager.find(CollabUserEntity, {
    where: { id: In(wanted) },
    select: { id: true, username: true },
  });
  return new Map(users.map((u) => [u.id, u.username]));
}
