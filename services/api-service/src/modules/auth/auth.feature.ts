import { defineFeature } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import type { NotificationsModule } from '../notifications/notifications.service';
import { type AuthModule, createAuthModule } from './auth.module';
import { AuthFlowStateEntity } from './auth-flow-state.entity';
import { IdentityEntity } from './identity.entity';
import { CreateAccounts1763800000000 } from './migrations/1763800000000-CreateAccounts';
import { CreateRevokedSessions1763800000200 } from './migrations/1763800000200-CreateRevokedSessions';
import { CreateAuthFlowStates1763800000300 } from './migrations/1763800000300-CreateAuthFlowStates';
import { AddCodeConfirmsSignup1763800000400 } from './migrations/1763800000400-AddCodeConfirmsSignup';
import { OneTimeCodeEntity } from './one-time-code.entity';
import { AuthSessionEntity, RefreshTokenEntity } from './session.entity';
import type { PersonalTenants } from './sessions.service';
import { UserEntity } from './user.entity';

/** Accounts and sessions (Supabase Auth's model): signup, logins, codes, tokens, revocations. */
export const authFeature = defineFeature<
  ApiConfig,
  AuthModule,
  { tenancy: { tenants: PersonalTenants }; notifications: NotificationsModule }
>({
  name: 'auth',
  entities: [
    UserEntity,
    IdentityEntity,
    AuthSessionEntity,
    RefreshTokenEntity,
    OneTimeCodeEntity,
    AuthFlowStateEntity,
  ],
  migrations: [
    CreateAccounts1763800000000,
    CreateRevokedSessions1763800000200,
    CreateAuthFlowStates1763800000300,
    AddCodeConfirmsSignup1763800000400,
  ],
  build: (deps, needs) => {
    const auth = createAuthModule(deps, needs.tenancy.tenants, needs.notifications.request);
    return {
      routes: [(api, app) => auth.mount(api, app)],
      exports: auth,
    };
  },
});
