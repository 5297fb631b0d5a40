import {
  platformEntities,
  platformMigrations,
  registerPlatformConsumers,
  type ServiceDefinition,
} from '@hwp/platform';
import { createApp } from './app';
import type { ApiConfig } from './config';
import { CreateAccounts1763800000000 } from './db/migrations/1763800000000-CreateAccounts';
import { CreateRevokedSessions1763800000200 } from './db/migrations/1763800000200-CreateRevokedSessions';
import { IdentityEntity } from './modules/auth/identity.entity';
import { OneTimeCodeEntity } from './modules/auth/one-time-code.entity';
import { AuthSessionEntity, RefreshTokenEntity } from './modules/auth/session.entity';
import { UserEntity } from './modules/auth/user.entity';
import {
  createNotificationsModule,
  notificationEntities,
  notificationMigrations,
} from './modules/notifications';
import { TenantEntity, TenantMemberEntity } from './modules/tenants/tenant.entity';

const accountEntities = [
  UserEntity,
  IdentityEntity,
  AuthSessionEntity,
  RefreshTokenEntity,
  OneTimeCodeEntity,
  TenantEntity,
  TenantMemberEntity,
];

/** The api-service: its schema, its app and its consumers, for main.ts, the embedded runner and tests. */
export const apiService: ServiceDefinition<ApiConfig> = {
  name: 'api-service',
  entities: [...platformEntities, ...accountEntities, ...notificationEntities],
  migrations: [
    ...platformMigrations,
    CreateAccounts1763800000000,
    ...notificationMigrations,
    CreateRevokedSessions1763800000200,
  ],
  blobRoutePrefix: '/blobs',
  createApp,
  async registerConsumers(deps) {
    await registerPlatformConsumers(deps);
    await createNotificationsModule(deps).registerConsumer();
  },
};
