import { randomBytes } from 'node:crypto';
import {
  DEFAULT_PAGE_SIZE,
  type Page,
  RoutingKeys,
  type Tenant,
  type TenantMember,
  type TenantMemberRemovedData,
  type TenantRole,
} from '@hwp/contracts';
import {
  type Bus,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  newId,
  ValidationError,
} from '@hwp/platform';
import { type DataSource, type EntityManager, In } from 'typeorm';
import { UserEntity } from '../auth/user.entity';
import { TenantEntity, TenantMemberEntity } from './tenant.entity';
import { registerTenantOwned, TenantScope } from './tenant-scope';

registerTenantOwned(TenantMemberEntity);

const RANK: Record<TenantRole, number> = { member: 0, admin: 1, owner: 2 };

export function hasTenantRole(role: TenantRole, required: TenantRole): boolean {
  return RANK[role] >= RANK[required];
}

function present(tenant: TenantEntity, role: TenantRole): Tenant {
  return {
    id: tenant.id,
    name: tenant.name,
    slug: tenant.slug,
    settings: tenant.settings,
    created_by: tenant.createdBy,
    created_at: tenant.createdAt.toISOString(),
    updated_at: tenant.updatedAt.toISOString(),
    role,
  };
}

function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/, '');
  return slug.length >= 2 ? slug : 'tenant';
}

/** The trimmed name; one of only blanks passes `@IsNotEmpty` but would be stored empty. */
function tenantName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) {
    throw new ValidationError('Invalid body: name', [{ field: 'name', message: 'name must not be blank' }]);
  }
  return trimmed;
}

export interface PageRequest {
  page?: number;
  pageSize?: number;
}

export function paging(request: PageRequest) {
  const page = request.page ?? 1;
  const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
  return { page, pageSize, skip: (page - 1) * pageSize, take: pageSize };
}

/** Tenants and memberships (DECISIONS.md section 2). Roles: member < admin < owner. */
export class TenantsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Bus,
  ) {}

  /**
   * Of these user and tenant pairs, the keys `<user>|<tenant>` that are memberships, in one read
   * (a system check across tenants: the WebSocket's periodic recheck of its sockets).
   */
  async memberships(
    manager: EntityManager,
    pairs: { userId: string; tenantId: string }[],
  ): Promise<Set<string>> {
    const rows: { user_id: string; tenant_id: string }[] = await manager.query(
      `SELECT m.user_id, m.tenant_id FROM tenant_members m
         JOIN unnest($1::uuid[], $2::uuid[]) AS p(user_id, tenant_id) USING (user_id, tenant_id)`,
      [pairs.map((p) => p.userId), pairs.map((p) => p.tenantId)],
    );
    return new Set(rows.map((r) => `${r.user_id}|${r.tenant_id}`));
  }

  /** The caller's role in a tenant, or null when they are not a member. */
  async roleOf(manager: EntityManager, userId: string, tenantId: string): Promise<TenantRole | null> {
    const member = await new TenantScope(manager, tenantId).repo(TenantMemberEntity).findOne({ userId });
    return member?.role ?? null;
  }

  /** The caller's membership or 404 (a tenant the caller is not in does not exist for them). */
  async requireMember(
    manager: EntityManager,
    userId: string,
    tenantId: string,
    required: TenantRole = 'member',
  ): Promise<TenantRole> {
    const role = await this.roleOf(manager, userId, tenantId);
    if (!role) throw new NotFoundError('Tenant not found');
    if (!hasTenantRole(role, required)) throw new ForbiddenError(`This needs the ${required} role or higher`);
    return role;
  }

  /** The tenant used when a request names none: the default one if still a member, else the first joined. */
  async fallbackTenant(
    manager: EntityManager,
    user: UserEntity,
  ): Promise<{ id: string; role: TenantRole } | null> {
    if (user.defaultTenantId) {
      const role = await this.roleOf(manager, user.id, user.defaultTenantId);
      if (role) return { id: user.defaultTenantId, role };
    }
    const first = await manager.findOne(TenantMemberEntity, {
      where: { userId: user.id },
      order: { createdAt: 'ASC', tenantId: 'ASC' },
    });
    return first ? { id: first.tenantId, role: first.role } : null;
  }

  private async freeSlug(manager: EntityManager, wanted: string | undefined, name: string): Promise<string> {
    if (wanted) {
      if (await manager.exists(TenantEntity, { where: { slug: wanted } })) {
        throw new ConflictError(`The slug "${wanted}" is taken`, { field: 'slug' });
      }
      return wanted;
    }
    const base = slugify(name);
    if (!(await manager.exists(TenantEntity, { where: { slug: base } }))) return base;
    return `${base.slice(0, 54)}-${randomBytes(4).toString('hex')}`;
  }

  async createIn(
    manager: EntityManager,
    userId: string,
    input: { name: string; slug?: string; personal?: boolean },
  ): Promise<Tenant> {
    const now = new Date();
    const name = tenantName(input.name);
    const tenant = manager.create(TenantEntity, {
      id: newId(),
      name,
      slug: await this.freeSlug(manager, input.slug, input.name),
      settings: {},
      personal: input.personal ?? false,
      createdBy: userId,
      createdAt: now,
      updatedAt: now,
    });
    // TypeORM's insert typing cannot express a jsonb column of unknown values.
    await manager.insert(TenantEntity, tenant as never);
    await new TenantScope(manager, tenant.id)
      .repo(TenantMemberEntity)
      .insert({ userId, role: 'owner', createdAt: now });
    return present(tenant, 'owner');
  }

  create(userId: string, input: { name: string; slug?: string }): Promise<Tenant> {
    return this.dataSource.transaction((manager) => this.createIn(manager, userId, input));
  }

  /**
   * Gives a user without any tenant a personal one, so tenant resolution never comes up empty. Runs
   * when an account is created (so a tenant somebody invites them to can never be their first) and,
   * for older accounts, at sign-in.
   * Runs in a transaction: the user row lock serializes concurrent first requests, which would
   * otherwise each see no membership and each create a personal tenant. FOR NO KEY UPDATE, not FOR
   * UPDATE: concurrent logins hold KEY SHARE on the row (their session rows reference it), and FOR
   * UPDATE would deadlock against those.
   */
  async ensurePersonalTenant(manager: EntityManager, user: UserEntity): Promise<void> {
    await manager.findOne(UserEntity, { where: { id: user.id }, lock: { mode: 'for_no_key_update' } });
    if (await manager.exists(TenantMemberEntity, { where: { userId: user.id } })) return;
    const who = user.userMetadata.first_name ?? user.email?.split('@')[0] ?? user.phone ?? 'Personal';
    const tenant = await this.createIn(manager, user.id, {
      name: `${who} (personal)`.slice(0, 100),
      personal: true,
    });
    await manager.update(UserEntity, { id: user.id }, { defaultTenantId: tenant.id });
    user.defaultTenantId = tenant.id;
  }

  /** The caller's tenants, in the order they joined them (the first is the fallback tenant). */
  async listForUser(userId: string, request: PageRequest): Promise<Page<Tenant>> {
    const { page, pageSize, skip, take } = paging(request);
    const manager = this.dataSource.manager;
    const [memberships, total] = await manager.findAndCount(TenantMemberEntity, {
      where: { userId },
      order: { createdAt: 'ASC', tenantId: 'ASC' },
      skip,
      take,
    });
    const tenants = memberships.length
      ? await manager.findBy(TenantEntity, { id: In(memberships.map((m) => m.tenantId)) })
      : [];
    const byId = new Map(tenants.map((t) => [t.id, t]));
    const items = memberships.flatMap((m) => {
      const tenant = byId.get(m.tenantId);
      return tenant ? [present(tenant, m.role)] : [];
    });
    return { items, total, page, pageSize };
  }

  /** Every tenant of a user with role (profile), oldest membership first. */
  async membershipsOf(userId: string): Promise<{ id: string; name: string; role: TenantRole }[]> {
    const rows: { id: string; name: string; role: TenantRole }[] = await this.dataSource.query(
      `SELECT t.id, t.name, m.role FROM tenant_members m JOIN tenants t ON t.id = m.tenant_id
       WHERE m.user_id = $1 ORDER BY m.created_at, t.id`,
      [userId],
    );
    return rows;
  }

  get(userId: string, tenantId: string): Promise<Tenant> {
    return this.getIn(this.dataSource.manager, userId, tenantId);
  }

  async getIn(manager: EntityManager, userId: string, tenantId: string): Promise<Tenant> {
    const role = await this.requireMember(manager, userId, tenantId);
    const tenant = await manager.findOneByOrFail(TenantEntity, { id: tenantId });
    return present(tenant, role);
  }

  async update(
    userId: string,
    tenantId: string,
    patch: { name?: string; slug?: string; settings?: Record<string, unknown> },
  ): Promise<Tenant> {
    return this.dataSource.transaction(async (manager) => {
      const role = await this.requireMember(manager, userId, tenantId, 'admin');
      const name = patch.name === undefined ? undefined : tenantName(patch.name);
      const tenant = await manager.findOneOrFail(TenantEntity, {
        where: { id: tenantId },
        lock: { mode: 'pessimistic_write' },
      });
      if (patch.slug !== undefined && patch.slug !== tenant.slug) {
        tenant.slug = await this.freeSlug(manager, patch.slug, tenant.name);
      }
      if (name !== undefined) tenant.name = name;
      if (patch.settings !== undefined) tenant.settings = patch.settings;
      tenant.updatedAt = new Date();
      await manager.save(TenantEntity, tenant);
      return present(tenant, role);
    });
  }

  async members(userId: string, tenantId: string, request: PageRequest): Promise<Page<TenantMember>> {
    const manager = this.dataSource.manager;
    await this.requireMember(manager, userId, tenantId);
    const { page, pageSize, skip, take } = paging(request);
    const [rows, total] = await new TenantScope(manager, tenantId)
      .repo(TenantMemberEntity)
      .findAndCount({ order: { createdAt: 'ASC', userId: 'ASC' }, skip, take });
    const users = rows.length ? await manager.findBy(UserEntity, { id: In(rows.map((r) => r.userId)) }) : [];
    const byId = new Map(users.map((u) => [u.id, u]));
    return {
      items: rows.map((row) => presentMember(row, byId.get(row.userId))),
      total,
      page,
      pageSize,
    };
  }

  async updateMember(actorId: string, tenantId: string, memberId: string, role: TenantRole) {
    return this.dataSource.transaction(async (manager) => {
      const actorRole = await this.requireMember(manager, actorId, tenantId, 'admin');
      const members = new TenantScope(manager, tenantId).repo(TenantMemberEntity);
      const member = await members.findOne({ userId: memberId }, { lock: true });
      if (!member) throw new NotFoundError('Member not found');
      if ((role === 'owner' || member.role === 'owner') && actorRole !== 'owner') {
        throw new ForbiddenError('Only an owner can grant or take the owner role');
      }
      if (member.role === 'owner' && role !== 'owner') await this.keepAnOwner(manager, tenantId);
      await members.update({ userId: memberId }, { role });
      member.role = role;
      return presentMember(member, await manager.findOneBy(UserEntity, { id: memberId }));
    });
  }

  async removeMember(actorId: string, tenantId: string, memberId: string): Promise<void> {
    await this.bus.transaction(async (manager) => {
      // Anyone may leave; removing somebody else needs admin+.
      const actorRole = await this.requireMember(
        manager,
        actorId,
        tenantId,
        actorId === memberId ? 'member' : 'admin',
      );
      const members = new TenantScope(manager, tenantId).repo(TenantMemberEntity);
      const member = await members.findOne({ userId: memberId }, { lock: true });
      if (!member) throw new NotFoundError('Member not found');
      if (member.role === 'owner' && actorRole !== 'owner')
        throw new ForbiddenError('Only an owner can remove an owner');
      if (member.role === 'owner') await this.keepAnOwner(manager, tenantId);
      await members.delete({ userId: memberId });
      // Every replica closes that user's sockets in the tenant at once (not at the next ping).
      const data: TenantMemberRemovedData = { userId: memberId };
      await this.bus.outbox.add(manager, {
        type: RoutingKeys.tenantMemberRemoved,
        tenantId,
        actor: actorId,
        data,
      });
      await manager.update(
        UserEntity,
        { id: memberId, defaultTenantId: tenantId },
        { defaultTenantId: null },
      );
    });
  }

  /** Refuses to take away the last owner (a tenant nobody can administer). */
  private async keepAnOwner(manager: EntityManager, tenantId: string): Promise<void> {
    const owners = await manager.query(
      'SELECT user_id FROM tenant_members WHERE tenant_id = $1 AND role = $2 FOR UPDATE',
      [tenantId, 'owner'],
    );
    if (owners.length <= 1) throw new ConflictError('A tenant keeps at least one owner');
  }
}

function presentMember(row: TenantMemberEntity, user: UserEntity | null | undefined): TenantMember {
  return {
    user_id: row.userId,
    email: user?.email ?? '',
    phone: user?.phone ?? '',
    first_name: user?.userMetadata.first_name ?? null,
    last_name: user?.userMetadata.last_name ?? null,
    role: row.role,
    created_at: row.createdAt.toISOString(),
  };
}
