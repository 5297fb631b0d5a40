import { defineFeature } from '@hwp/platform';
import type { CollabConfig } from '../../config';
import { CollabUserEntity } from './collab-user.entity';
import { createIdentityModule, type IdentityModule } from './identity.module';

/** Who is calling: API host tokens (JWKS, revocations) or the session cookie, and the user table. */
export const identityFeature = defineFeature<CollabConfig, IdentityModule>({
  name: 'identity',
  entities: [CollabUserEntity],
  build: (deps) => {
    const identity = createIdentityModule(deps);
    return {
      routes: [
        (api, app) => {
          identity.install(app);
          identity.mount(api);
        },
      ],
      consumers: () => identity.registerConsumer(),
      exports: identity,
    };
  },
});
