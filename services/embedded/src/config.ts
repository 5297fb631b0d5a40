import { type ApiConfig, loadApiConfig } from '@hwp/api-service/config';
import { type CollabConfig, loadCollabConfig } from '@hwp/collab-service/config';
import { ConfigError } from '@hwp/platform/config';

/**
 * With DATABASE_URL set, each service still gets its own database on that server: `api` and
 * `collab`, or `<name>_api` and `<name>_collab` when the URL names a database other than `postgres`
 * (several runners on one server).
 */
export function databaseFor(url: string | undefined, service: 'api' | 'collab'): string | undefined {
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url; // left to the services' validation, which names DATABASE_URL
  }
  const named = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  parsed.pathname = `/${named && named !== 'postgres' ? `${named}_${service}` : service}`;
  return parsed.toString();
}

/**
 * Runs one service's loader; a refusal's problems are collected under the names the operator set
 * (the runner hands API_PORT or COLLAB_PORT to the service as PORT).
 */
function attempt<T>(load: () => T, portVariable: string, problems: Record<string, string>): T | undefined {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const [name, why] of Object.entries(error.problems)) {
      problems[name === 'PORT' ? portVariable : name] ??= why;
    }
    return undefined;
  }
}

/**
 * The one-process runner reads the same variables as the services, plus API_PORT and
 * COLLAB_PORT (the services' PORT would collide in one process). A refusal names every bad
 * variable of both services at once.
 */
export function loadEmbeddedConfig(env: NodeJS.ProcessEnv): { api: ApiConfig; collab: CollabConfig } {
  // Loopback unless HOST says otherwise: the quick start has an open dev mailbox with sign-in codes.
  const host = env.HOST ?? '127.0.0.1';
  const problems: Record<string, string> = {};
  const api = attempt(
    () =>
      loadApiConfig({
        ...env,
        HOST: host,
        PORT: env.API_PORT ?? '3000',
        DATABASE_URL: databaseFor(env.DATABASE_URL, 'api'),
      }),
    'API_PORT',
    problems,
  );
  const collab = attempt(
    () =>
      loadCollabConfig({
        // The collaboration host verifies the API host's tokens through its JWKS, over loopback here.
        AUTH_JWKS_URL: `http://127.0.0.1:${api?.PORT ?? 3000}/.well-known/jwks.json`,
        ...env,
        HOST: host,
        PORT: env.COLLAB_PORT ?? '4000',
        DATABASE_URL: databaseFor(env.DATABASE_URL, 'collab'),
      }),
    'COLLAB_PORT',
    problems,
  );
  if (!api || !collab) throw new ConfigError(problems);
  return { api, collab };
}
