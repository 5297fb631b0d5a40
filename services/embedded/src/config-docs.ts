import { apiConfigSpecs } from '@hwp/api-service';
import { collabConfigSpecs } from '@hwp/collab-service';
import { baseConfigSpecs, type ConfigDocSection } from '@hwp/platform';

/** What only the one-process runner reads (it hands each service its own PORT). */
const RUNNER_VARIABLES = {
  API_PORT: { default: 3000, desc: "The API host's port in the one-process runner" },
  COLLAB_PORT: { default: 4000, desc: "The collaboration host's port in the one-process runner" },
  HOST: {
    default: '127.0.0.1',
    desc: 'Interface the runner listens on: loopback unless set (the services alone: 0.0.0.0)',
  },
};

/** The sections of `docs/configuration.md`, in the order a reader meets the variables. */
export function configDocSections(): ConfigDocSection[] {
  const base = baseConfigSpecs(3000);
  return [
    {
      title: 'Both hosts',
      specs: {
        ...base,
        PORT: { ...base.PORT, desc: 'HTTP port: 3000 on the API host, 4000 on the collaboration host' },
      },
    },
    { title: 'API host only', specs: apiConfigSpecs() },
    { title: 'Collaboration host only', specs: collabConfigSpecs() },
    { title: 'One-process runner (`pnpm start`)', specs: RUNNER_VARIABLES },
  ];
}
