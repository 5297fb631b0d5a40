import { type ApiConfig, loadApiConfig } from '@hwp/api-service';
import { type CollabConfig, loadCollabConfig } from '@hwp/collab-service';

/**
 * With DATABASE_URL set, each service still gets its own database on that server: `api` and
 * `collab`, or `<name>_api` and `<name>_collab` when the URL names a database other than `postgres`
 * (several runners on one server).
 */
export function databaseFor(url: string | undefined, service: 'api' | 'collab'): string | undefined {
  if (!url) return undefined;
  const parsed = new URL(url);
  const named = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  parsed.pathname = `/${named && named !== 'postgres' ? `${named}_${service}` : service}`;
  return parsed.toString();
}

/**
 * The one-process runner reads the same variables as the services, plus API_PORT and
 * COLLAB_PORT (the services' PORT would collide in one process).
 */
export function loadEmbeddedConfig(env: NodeJS.ProcessEnv): { api: ApiConfig; collab: CollabConfig } {
  // Loopback unless HOST says otherwise: the quick start has an open dev mailbox with sign-in codes.
  const host = env.HOST ?? '127.0.0.1';
  const api = loadApiConfig({
    ...env,
    HOST: host,
    PORT: env.API_PORT ?? '3000',
    DATABASE_URL: databaseFor(env.DATABASE_URL, 'api'),
  });
  const collab = loadCollabConfig({
    // The collaboration host verifies the API host's tokens through its JWKS, over loopback here.
    AUTH_JWKS_URL: `http://127.0.0.1:${api.PORT}/.well-known/jwks.json`,
    ...env,
    HOST: host,
    PORT: env.COLLAB_PORT ?? '4000',
    DATABASE_URL: databaseFor(env.DATABASE_URL, 'collab'),
  });
  return { api, collab };
}
