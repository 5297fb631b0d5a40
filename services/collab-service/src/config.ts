import { baseConfigSpecs, loadConfig } from '@hwp/platform';

/** Reads and validates the collab-service environment; the only reader of process.env in this service. */
export function loadCollabConfig(env: NodeJS.ProcessEnv) {
  return loadConfig(env, {
    ...baseConfigSpecs(4000),
  });
}

export type CollabConfig = ReturnType<typeof loadCollabConfig>;
