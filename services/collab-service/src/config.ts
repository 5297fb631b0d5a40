import { type BaseConfig, baseConfigSpecs, loadConfig } from '@hwp/platform';

/** Validated configuration of the collab-service (README lists every variable). */
export interface CollabConfig extends BaseConfig {}

/** Reads and validates the collab-service environment; the only reader of process.env in this service. */
export function loadCollabConfig(env: NodeJS.ProcessEnv): CollabConfig {
  return loadConfig(env, baseConfigSpecs(4000)) as CollabConfig;
}
