import { baseConfigSpecs, loadConfig } from '@hwp/platform';

/** Reads and validates the api-service environment; the only reader of process.env in this service. */
export function loadApiConfig(env: NodeJS.ProcessEnv) {
  return loadConfig(env, {
    ...baseConfigSpecs(3000),
  });
}

export type ApiConfig = ReturnType<typeof loadApiConfig>;
