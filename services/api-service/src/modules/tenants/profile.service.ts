import type { Profile, UpdateProfileRequest } from '@hwp/contracts';
import { type Bus, ValidationError } from '@hwp/platform';
import type { DataSource } from 'typeorm';
import type { AuthService } from '../auth/auth.service';
import { UserEntity } from '../auth/user.entity';
import type { TenantsService } from '../tenancy/tenants.service';

/** `GET/PUT /profile`: the user's names, avatar and default tenant, with their tenants. */
export class ProfileService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly auth: AuthService,
    private readonly tenants: TenantsService,
  ) {}

  async get(userId: string): Promise<Profile> {
    const user = await this.dataSource.manager.findOneByOrFail(UserEntity, { id: userId });
    return {
      id: user.id,
      email: user.email ?? '',
      phone: user.phone ?? '',
      first_name: user.userMetadata.first_name ?? null,
      last_name: user.userMetadata.last_name ?? null,
      avatar_url: user.userMetadata.avatar_url ?? null,
      default_tenant_id: user.defaultTenantId,
      tenants: await this.tenants.membershipsOf(user.id),
    };
  }

  async update(userId: string, patch: UpdateProfileRequest): Promise<Profile> {
    await this.bus.transaction(async (manager) => {
      const user = await manager.findOneOrFail(UserEntity, {
        where: { id: userId },
        lock: { mode: 'pessimistic_write' },
      });
      if (patch.default_tenant_id) {
        const role = await this.tenants.roleOf(manager, userId, patch.default_tenant_id);
        if (!role) {
          throw new ValidationError('default_tenant_id must be a tenant you belong to', [
            { field: 'default_tenant_id', message: 'not one of your tenants' },
          ]);
        }
      }
      await this.auth.updateProfile(manager, user, patch);
    });
    return this.get(userId);
  }
}
