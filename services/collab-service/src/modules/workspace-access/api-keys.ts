import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_KEY_PREFIX, type ApiKey, type ApiKeyList, type CreatedApiKey } from '@hwp/contracts';
import { NotFoundError, newId, UnauthorizedError } from '@hwp/platform';
import { Column, type DataSource, Entity } from 'typeorm';
import type { CollabUserEntity } from '../identity/collab-user.entity';
import { usernames } from '../identity/usernames';
import {
  registerWorkspaceOwned,
  type WorkspaceAccess,
  WorkspaceRow,
  type WorkspaceScope,
} from './workspace-scope';

/** A workspace API key: the secret is shown once and stored as its sha256 only. */
@Entity({ name: 'workspace_api_keys' })
export class WorkspaceApiKeyEntity extends WorkspaceRow {
  @Column('text')
  name: string;

  @Column('text')
  prefix: string;

  @Column({ name: 'secret_hash', type: 'text' })
  secretHash: string;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
registerWorkspaceOwned(WorkspaceApiKeyEntity);

/** `hwpk_<key id>_<secret>`: the id finds the row, the secret (256 random bits) proves the key. */
const KEY_FORMAT =
  /^hwpk_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const hashOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest();
/** How often a key's last-used time is written (every request would be a write per ERP poll). */
const LAST_USED_EVERY_MS = 60_000;

export function isApiKey(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

/** What a verified key lets a request do: read its one workspace, as a viewer of BOMs and parts. */
export interface ApiKeyAccess {
  keyId: string;
  workspace: WorkspaceAccess;
}

/*
 * Unscoped by design: a request that sends a key names no workspace the role check could scope by;
 * the key's id (in the key) finds its row, and the row says the workspace the request may read.
 * These two statements run before any WorkspaceScope exists; everything else goes through one.
 */

interface KeyRow {
  id: string;
  secret_hash: string;
  workspace_id: string;
  name: string;
  last_used_at: Date | null;
}

/** The unrevoked key with this id, with its workspace's name, in whichever workspace holds it. */
async function liveKeyAcrossWorkspaces(dataSource: DataSource, keyId: string): Promise<KeyRow | undefined> {
  const rows: KeyRow[] = await dataSource.query(
    `SELECT k.id, k.secret_hash, k.workspace_id, w.name, k.last_used_at
       FROM workspace_api_keys k JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.id = $1 AND k.revoked_at IS NULL`,
    [keyId],
  );
  return rows[0];
}

/** Stamps the verified key's last use (its id was found by liveKeyAcrossWorkspaces). */
async function markKeyUsedAcrossWorkspaces(dataSource: DataSource, keyId: string): Promise<void> {
  await dataSource.query('UPDATE workspace_api_keys SET last_used_at = now() WHERE id = $1', [keyId]);
}

/** Workspace API keys: created and revoked by managers, verified on every request that sends one. */
export class ApiKeys {
  constructor(private readonly dataSource: DataSource) {}

  async create(actor: CollabUserEntity, access: WorkspaceScope, name: string): Promise<CreatedApiKey> {
    const id = newId();
    const secret = randomBytes(32).toString('base64url');
    const key = `${API_KEY_PREFIX}${id}_${secret}`;
    const row = await access.repo(WorkspaceApiKeyEntity).insert({
      id,
      name: name.trim(),
      prefix: key.slice(0, API_KEY_PREFIX.length + 8),
      secretHash: hashOf(secret).toString('hex'),
      createdBy: actor.id,
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    });
    return { ...present(row, access.name, new Map([[actor.id, actor.username]])), key };
  }

  async list(access: WorkspaceScope): Promise<ApiKeyList> {
    const rows = await access.repo(WorkspaceApiKeyEntity).find({ order: { createdAt: 'ASC', id: 'ASC' } });
    const names = await usernames(
      access.manager,
      rows.map((r) => r.createdBy),
    );
    return { items: rows.map((r) => present(r, access.name, names)) };
  }

  /** Revoking is immediate and final; revoking again answers the revoked key. */
  async revoke(access: WorkspaceScope, id: string): Promise<ApiKey> {
    const keys = access.repo(WorkspaceApiKeyEntity);
    const row = await keys.findOne({ id });
    if (!row) throw new NotFoundError('No such API key in this workspace');
    if (!row.revokedAt) {
      row.revokedAt = new Date();
      await keys.save(row);
    }
    const names = await usernames(access.manager, [row.createdBy]);
    return present(row, access.name, names);
  }

  /** The key's workspace, or 401 for a malformed, unknown or revoked key. */
  async verify(token: string): Promise<ApiKeyAccess> {
    const match = KEY_FORMAT.exec(token);
    const refused = new UnauthorizedError('The API key is invalid or revoked');
    if (!match) throw refused;
    const row = await liveKeyAcrossWorkspaces(this.dataSource, match[1]);
    const given = hashOf(match[2]);
    if (!row || !timingSafeEqual(given, Buffer.from(row.secret_hash, 'hex'))) throw refused;
    if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > LAST_USED_EVERY_MS) {
      await markKeyUsedAcrossWorkspaces(this.dataSource, row.id);
    }
    return { keyId: row.id, workspace: { id: row.workspace_id, name: row.name, role: 'viewer' } };
  }
}

function present(row: WorkspaceApiKeyEntity, workspace: string, names: Map<string, string>): ApiKey {
  return {
    id: row.id,
    name: row.name,
    workspace,
    prefix: row.prefix,
    createdBy: names.get(row.createdBy) ?? '',
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
  };
}
