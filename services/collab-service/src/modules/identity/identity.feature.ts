import { RoutingKeys } from '@hwp/contracts';
import { createAccessTokenVerifier, defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import { Authentication, EndedSessions } from './authentication';
import { CollabUserEntity } from './collab-user.entity';
import { createCookieSessions } from './cookie-sessions';
import type { IdentityModule } from './identity.module';
import { RevokedSessions } from './revoked-sessions';
import {
  authConfig,
  clientConfig,
  currentSession,
  exchangeToken,
  logout,
  sessionCookies,
} from './session.routes';
import { UsersService } from './users.service';

/**
 * Who is calling (DECISIONS.md section 4): the API host's access tokens, verified through its JWKS,
 * either sent as a bearer token on every request (integrations) or exchanged once for a session
 * cookie (browsers); and the collaboration users, kept in step with the API host.
 */
export const identityFeature = defineFeature<CollabConfig, IdentityModule>({
  name: 'identity',
  entities: [CollabUserEntity],
  build: (deps) => {
    const { config, dataSource, bus } = deps;
    const users = new UsersService(dataSource);
    const verifier = createAccessTokenVerifier({
      jwksUrl: config.AUTH_JWKS_URL,
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
    });
    const ended = new EndedSessions(deps.logger);
    const revoked = new RevokedSessions({
      url: config.AUTH_REVOCATIONS_URL ?? new URL('/auth/sessions/revoked', config.AUTH_JWKS_URL).toString(),
      refreshMs: config.AUTH_REVOCATIONS_REFRESH_MS,
      onLearned: (ids) => ended.ended(ids),
      logger: deps.logger,
    });
    const cookies = createCookieSessions(deps);
    const auth = new Authentication(verifier, revoked, users, deps);

    const consumers = async () => {
      // Every replica keeps its own list: a broadcast subscription, plus full re-reads (see RevokedSessions).
      await bus.subscribeTo(
        {
          consumer: 'session-revocations',
          keys: [RoutingKeys.sessionRevoked, RoutingKeys.collabSessionEnded],
          broadcast: true,
        },
        async (event) => {
          if (event.type === RoutingKeys.collabSessionEnded) {
            // A cookie signed out on some replica (this one's streams ended already: harmless again).
            ended.ended(event.data.session_keys);
            return;
          }
          revoked.add(event.data);
          ended.ended(event.data.session_ids);
        },
      );
      revoked.start();
      deps.lifecycle.onShutdown('session-revocations', () => revoked.stop());
      await bus.subscribeTo(
        { consumer: 'user-sync', keys: [RoutingKeys.userUpdated] },
        async (event, manager) => {
          await users.apply(manager, event.data);
        },
      );
    };

    return {
      routes: [
        sessionCookies(cookies),
        exchangeToken(auth, users, cookies),
        logout(cookies, ended, bus),
        currentSession(auth, cookies),
        authConfig(config),
        clientConfig(config),
      ],
      consumers,
      exports: {
        users,
        verifier,
        requireUser: auth.requireUser,
        onSessionsEnded: (listener) => ended.listen(listener),
      },
    };
  },
});
