import { randomBytes } from 'node:crypto';
import type { CollabUser, UserUpdatedData } from '@hwp/contracts';
import { ExpiringMap } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { folderNamesAcrossWorkspaces, namesFoldersAcrossWorkspaces } from '../shared-files/folder-names';
import { CollabUserEntity } from './collab-user.entity';

export function presentUser(user: CollabUserEntity): CollabUser {
  return { id: user.id, email: user.email, username: user.username, displayName: user.displayName };
}

/** `Ada.Lovelace+cad@x.io` -> `ada.lovelace-cad`; lowercase `[a-z0-9._-]`, starting with a letter or digit. */
export function usernameBase(email: string, fallback: string): string {
  const local = email.split('@')[0] ?? '';
  const cleaned = local
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 48);
  return cleaned || fallback;
}

function displayNameOf(email: string, first?: string | null, last?: string | null): string {
  const name = [first, last].filter(Boolean).join(' ').trim();
  return name || email.split('@')[0] || '';
}

/**
 * Collaboration users, kept in step with the API host: created on first sight of a token (or of a
 * `user.updated.v1` event, whichever comes first) and updated by those events.
 */
/** How long a user row read for a request is reused, and how many are kept. */
const USER_TTL_MS = 5_000;
const USERS_KEPT = 10_000;

export class UsersService {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Users read for requests, reused for a few seconds: each request of a signed-in user would read
   * the row again. Changes made here drop the entry; one made on another replica (a username
   * claimed there, an email synced there) shows here within USER_TTL_MS.
   */
  private readonly recent = new ExpiringMap<string, CollabUserEntity>(USERS_KEPT);

  private remember(user: CollabUserEntity): CollabUserEntity {
    return this.recent.set(user.id, user, Date.now() + USER_TTL_MS);
  }

  /**
   * `base`, or `base-2`, `base-3`, ...: the first name no user holds and no file is under (a folder
   * is named by its username, so a name that files are under would open them to the newcomer).
   */
  private async freeUsername(manager: EntityManager, base: string): Promise<string> {
    const users = (await manager.query(
      `SELECT username FROM collab_users WHERE username = $1 OR username LIKE $2 ESCAPE '\\'`,
      [base, `${base.replace(/[\\%_]/g, (c) => `\\${c}`)}-%`],
    )) as { username: string }[];
    const taken = new Set([
      ...users.map((r) => r.username),
      ...(await folderNamesAcrossWorkspaces(manager, base)),
    ]);
    if (!taken.has(base)) return base;
    for (let n = 2; n < 100; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
    return `${base}-${randomBytes(3).toString('hex')}`;
  }

  /**
   * Inserts the user when unknown; returns the row either way. Concurrent first requests of one
   * user are safe (`ON CONFLICT (id) DO NOTHING`); a username race retries with another suffix.
   */
  async ensure(
    manager: EntityManager,
    identity: {
      id: string;
      email: string;
      firstName?: string | null;
      lastName?: string | null;
      username?: string;
    },
  ): Promise<CollabUserEntity> {
    const existing = await manager.findOneBy(CollabUserEntity, { id: identity.id });
    if (existing) return existing;
    for (let attempt = 0; attempt < 3; attempt++) {
      const username = await this.freeUsername(
        manager,
        identity.username ?? usernameBase(identity.email, `user-${identity.id.slice(-8)}`),
      );
      const rows: unknown[] = await manager.query(
        `INSERT INTO collab_users (id, email, username, display_name, created_at, updated_at)
         VALUES ($1, $2, $3, $4, now(), now())
         ON CONFLICT DO NOTHING RETURNING id`,
        [
          identity.id,
          identity.email,
          username,
          displayNameOf(identity.email, identity.firstName, identity.lastName),
        ],
      );
      const row = await manager.findOneBy(CollabUserEntity, { id: identity.id });
      if (row) return row;
      if (rows.length === 0) continue; // the username was taken meanwhile
    }
    throw new Error(`could not create collaboration user ${identity.id}`);
  }

  /** The caller of a request: known users in one read (no transaction); new ones are created. */
  async ensureFromToken(identity: { id: string; email: string }): Promise<CollabUserEntity> {
    const recent = this.recent.get(identity.id);
    if (recent) return recent;
    const known = await this.byId(identity.id);
    if (known) return this.remember(known);
    return this.remember(await this.dataSource.transaction((manager) => this.ensure(manager, identity)));
  }

  async byId(id: string): Promise<CollabUserEntity | null> {
    return this.dataSource.manager.findOneBy(CollabUserEntity, { id });
  }

  async byUsername(manager: EntityManager, username: string): Promise<CollabUserEntity | null> {
    return manager.findOneBy(CollabUserEntity, { username });
  }

  /**
   * Takes a preferred username when it is free (`POST /v1/users/init`). Folders are named by
   * username (`<workspace>/<username>/`), so a name that names files belongs to them for good: the
   * caller keeps a name their files are under, and cannot take one other files are under (it would
   * open someone else's folder to them).
   */
  async claimUsername(user: CollabUserEntity, username: string): Promise<CollabUserEntity> {
    if (user.username === username) return user;
    const claimed = await this.dataSource.transaction(async (manager) => {
      // Serialises renames (and first claims) of this user.
      await manager.query('SELECT 1 FROM collab_users WHERE id = $1 FOR UPDATE', [user.id]);
      const holder = await manager.findOneBy(CollabUserEntity, { username });
      if (holder) return user;
      if (await namesFoldersAcrossWorkspaces(manager, [user.username, username])) return user;
      await manager.update(CollabUserEntity, { id: user.id }, { username, updatedAt: new Date() });
      return { ...user, username };
    });
    this.recent.delete(user.id);
    return claimed;
  }

  /** `user.updated.v1` from the API host: email and display name follow; the username stays. */
  async apply(manager: EntityManager, data: UserUpdatedData): Promise<void> {
    this.recent.delete(data.userId);
    const email = data.email ?? '';
    const user = await this.ensure(manager, {
      id: data.userId,
      email,
      firstName: data.firstName,
      lastName: data.lastName,
    });
    await manager.update(
      CollabUserEntity,
      { id: user.id },
      { email, displayName: displayNameOf(email, data.firstName, data.lastName), updatedAt: new Date() },
    );
  }
}
