import { type BaseConfig, baseConfigSpecs, loadConfig } from '@hwp/platform';

/** Validated configuration of the api-service (README lists every variable). */
export interface ApiConfig extends BaseConfig {}

/** Reads and validates the api-service environment; the only reader of process.env in this service. */
export function loadApiConfig(env: NodeJS.ProcessEnv): ApiConfig {
  return loadConfig(env, baseConfigSpecs(3000)) as ApiConfig;
}
