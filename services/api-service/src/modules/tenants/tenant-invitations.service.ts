import {
  type NotificationRequestedData,
  type Page,
  type Tenant,
  type TenantInvitation,
  type TenantRole,
} from '@hwp/contracts';
import { ConflictError, ForbiddenError, NotFoundError, newId } from '@hwp/platform';
import { type DataSource, type EntityManager, In, MoreThan } from 'typeorm';
import { randomToken, sha256 } from '../auth/tokens';
import { UserEntity } from '../auth/user.entity';
import { TenantEntity, TenantMemberEntity } from '../tenancy/tenant.entity';
import { TenantInvitationEntity } from '../tenancy/tenant-invitation.entity';
import { registerTenantOwned, TenantScope } from '../tenancy/tenant-scope';
import { hasTenantRole, type PageRequest, paging, type TenantsService } from '../tenancy/tenants.service';

registerTenantOwned(TenantInvitationEntity);

export interface TenantInvitationSettings {
  ttlMs: number;
  /** `<link base>/tenant-invite?token=<token>`: where the browser app accepts. */
  linkBase: string;
  /** Asks the notifier for the email, inside the caller's transaction. */
  notify(manager: EntityManager, data: NotificationRequestedData, actor: string): Promise<void>;
}

/** One line of plain text (names go into a subject header). */
function oneLine(text: string): string {
  return text
    .replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function present(row: TenantInvitationEntity, tenantName: string, now = new Date()): TenantInvitation {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    tenant_name: tenantName,
    email: row.email,
    role: row.role,
    status: row.status === 'pending' && row.expiresAt <= now ? 'expired' : row.status,
    invited_by: row.invitedBy,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
  };
}

const notFoundForYou = () => new NotFoundError('No pending invitation of yours has that token or id');

/**
 * Tenant membership by consent (DECISIONS.md section 2, changed): an admin invites an address, the
 * person who proves that address (signed in with it confirmed) accepts or declines. Until then
 * nothing of theirs changes, and the inviter learns nothing about whether an account uses it.
 */
export class TenantInvitationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tenants: TenantsService,
    private readonly settings: TenantInvitationSettings,
  ) {}

  /** Invites (or re-invites, with a new token and expiry) an address; answers alike for every address. */
  async invite(
    actorId: string,
    tenantId: string,
    input: { email: string; role: TenantRole },
  ): Promise<TenantInvitation> {
    const email = input.email.trim().toLowerCase();
    return this.dataSource.transaction(async (manager) => {
      const actorRole = await this.tenants.requireMember(manager, actorId, tenantId, 'admin');
      if (input.role === 'owner' && actorRole !== 'owner') {
        throw new ForbiddenError('Only an owner can invite owners');
      }
      // Members are listed to every member, so saying so reveals nothing new.
      const member = await manager.query(
        `SELECT 1 FROM tenant_members m JOIN users u ON u.id = m.user_id
          WHERE m.tenant_id = $1 AND u.email = $2`,
        [tenantId, email],
      );
      if (member.length > 0) throw new ConflictError('That address is already a member of this tenant');
      const tenant = await manager.findOneOrFail(TenantEntity, { where: { id: tenantId } });
      const invitations = new TenantScope(manager, tenantId).repo(TenantInvitationEntity);
      const now = new Date();
      const token = randomToken();
      const expiresAt = new Date(now.getTime() + this.settings.ttlMs);
      // One pending invitation per address: a repeat takes the place of the earlier one (its token
      // stops working), with the new role.
      await invitations.update({ email, status: 'pending' }, { status: 'revoked', respondedAt: now });
      const row = await invitations.insert({
        id: newId(),
        email,
        role: input.role,
        tokenHash: sha256(token),
        status: 'pending',
        invitedBy: actorId,
        createdAt: now,
        expiresAt,
        respondedAt: null,
      });
      const inviter = await manager.findOneBy(UserEntity, { id: actorId });
      await this.settings.notify(manager, this.message(email, token, tenant.name, inviter, row), actorId);
      return present(row, tenant.name, now);
    });
  }

  private message(
    to: string,
    token: string,
    tenantName: string,
    inviter: UserEntity | null,
    row: TenantInvitationEntity,
  ): NotificationRequestedData {
    const name = oneLine(
      [inviter?.userMetadata.first_name, inviter?.userMetadata.last_name].filter(Boolean).join(' '),
    );
    const address = inviter?.email ?? '';
    const sender = name ? `${name} (${address})` : address || 'A colleague';
    const link = `${this.settings.linkBase}/tenant-invite?token=${encodeURIComponent(token)}`;
    const tenant = oneLine(tenantName);
    return {
      channel: 'email',
      to,
      template: 'tenant-invitation',
      subject: `${oneLine(name || address || 'A colleague')} invited you to ${tenant}`,
      text: [
        `${sender} invited you to join "${tenant}" as ${row.role}.`,
        '',
        `Accept or decline the invitation: ${link}`,
        '',
        `Or sign in with ${to} and use this invitation token: ${token}`,
        '',
        `Nothing changes for you unless you accept. The invitation expires at ${row.expiresAt.toISOString()}.`,
      ].join('\n'),
      vars: { token, link, tenant, role: row.role, expires_at: row.expiresAt.toISOString() },
    };
  }

  /** The tenant's invitations, newest first (admin+). */
  async listForTenant(
    actorId: string,
    tenantId: string,
    request: PageRequest,
  ): Promise<Page<TenantInvitation>> {
    const manager = this.dataSource.manager;
    await this.tenants.requireMember(manager, actorId, tenantId, 'admin');
    const { page, pageSize, skip, take } = paging(request);
    const [rows, total] = await new TenantScope(manager, tenantId)
      .repo(TenantInvitationEntity)
      .findAndCount({ order: { createdAt: 'DESC', id: 'ASC' }, skip, take });
    const tenant = await manager.findOneByOrFail(TenantEntity, { id: tenantId });
    const now = new Date();
    return { items: rows.map((r) => present(r, tenant.name, now)), total, page, pageSize };
  }

  /** Withdraws a pending invitation (admin+); its token stops working. */
  async revoke(actorId: string, tenantId: string, invitationId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await this.tenants.requireMember(manager, actorId, tenantId, 'admin');
      const invitations = new TenantScope(manager, tenantId).repo(TenantInvitationEntity);
      const row = await invitations.findOne({ id: invitationId }, { lock: true });
      if (!row) throw new NotFoundError('Invitation not found');
      if (row.status !== 'pending') throw new ConflictError(`The invitation is already ${row.status}`);
      await invitations.update({ id: invitationId }, { status: 'revoked', respondedAt: new Date() });
    });
  }

  /** The caller's pending, unexpired invitations (to their confirmed email address), newest first. */
  async listMine(userId: string, request: PageRequest): Promise<Page<TenantInvitation>> {
    const manager = this.dataSource.manager;
    const { page, pageSize, skip, take } = paging(request);
    const email = await this.confirmedEmail(manager, userId);
    if (!email) return { items: [], total: 0, page, pageSize };
    const now = new Date();
    // The addressee's own view across tenants: found by their address, not through a tenant scope.
    const [rows, total] = await manager.findAndCount(TenantInvitationEntity, {
      where: { email, status: 'pending', expiresAt: MoreThan(now) },
      order: { createdAt: 'DESC', id: 'ASC' },
      skip,
      take,
    });
    const tenants = rows.length
      ? await manager.findBy(TenantEntity, { id: In(rows.map((r) => r.tenantId)) })
      : [];
    const names = new Map(tenants.map((t) => [t.id, t.name]));
    return { items: rows.map((r) => present(r, names.get(r.tenantId) ?? '', now)), total, page, pageSize };
  }

  /** Accepts by emailed token or by id: the caller becomes a member with the invitation's role. */
  accept(userId: string, by: { token: string } | { id: string }): Promise<Tenant> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.pendingFor(manager, userId, by);
      // The invitation stands only while its sender may still send it: one removed from the tenant
      // or demoted since cannot bring anyone in (or an admin grant an owner's role).
      const inviterRole = row.invitedBy && (await this.tenants.roleOf(manager, row.invitedBy, row.tenantId));
      if (!inviterRole || !hasTenantRole(inviterRole, row.role === 'owner' ? 'owner' : 'admin')) {
        throw notFoundForYou();
      }
      const now = new Date();
      const members = new TenantScope(manager, row.tenantId).repo(TenantMemberEntity);
      if (!(await members.findOne({ userId }))) {
        await members.insert({ userId, role: row.role, createdAt: now });
      }
      await manager.update(TenantInvitationEntity, { id: row.id }, { status: 'accepted', respondedAt: now });
      return this.tenants.getIn(manager, userId, row.tenantId);
    });
  }

  /** Declines by emailed token or by id; nothing else changes. */
  async decline(userId: string, by: { token: string } | { id: string }): Promise<TenantInvitation> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.pendingFor(manager, userId, by);
      row.status = 'declined';
      row.respondedAt = new Date();
      await manager.update(
        TenantInvitationEntity,
        { id: row.id },
        { status: 'declined', respondedAt: row.respondedAt },
      );
      const tenant = await manager.findOneByOrFail(TenantEntity, { id: row.tenantId });
      return present(row, tenant.name);
    });
  }

  private async confirmedEmail(manager: EntityManager, userId: string): Promise<string | null> {
    const user = await manager.findOneBy(UserEntity, { id: userId });
    return user?.email && user.emailConfirmedAt ? user.email : null;
  }

  /**
   * The pending, unexpired invitation the token or id names, locked, when it is addressed to the
   * caller's confirmed email; else 404 (one answer for every miss, so a guessed id or a stolen token
   * tells nothing).
   */
  private async pendingFor(
    manager: EntityManager,
    userId: string,
    by: { token: string } | { id: string },
  ): Promise<TenantInvitationEntity> {
    const email = await this.confirmedEmail(manager, userId);
    if (!email) throw notFoundForYou();
    // Found by token or id across tenants: the addressee is not a member of the tenant yet.
    const row = await manager.findOne(TenantInvitationEntity, {
      where: 'token' in by ? { tokenHash: sha256(by.token) } : { id: by.id },
      lock: { mode: 'pessimistic_write' },
    });
    if (!row || row.email !== email || row.status !== 'pending' || row.expiresAt <= new Date()) {
      throw notFoundForYou();
    }
    return row;
  }
}
