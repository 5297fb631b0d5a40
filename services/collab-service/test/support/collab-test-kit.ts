import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiConfig } from '@hwp/api-service';
import type { WorkspaceRole } from '@hwp/contracts';
import {
  apiTestEnv,
  as,
  signUp,
  startTestService,
  startTokenIssuer,
  type TestService,
  type TestUser,
} from '@hwp/platform/test-kit';
import { type CollabConfig, loadCollabConfig } from '../../src/config';
import type { WorkspacesExports } from '../../src/modules/workspaces/workspaces.feature';
import { collabService } from '../../src/service';
import { createWorkspace } from './factories';

export type CollabTestService = TestService<CollabConfig>;
export type ApiTestService = TestService<ApiConfig>;

/**
 * The API host as its own tests start it (`apiTestEnv`, on a fresh database). Its code (283 modules, 3 MB) is loaded here, so files that mint tokens with startStack skip it.
 */
function startApi(env: Record<string, string>): Promise<ApiTestService> {
  const { apiService, loadApiConfig } = require('@hwp/api-service') as typeof import('@hwp/api-service');
  return startTestService(apiService, loadApiConfig, { ...apiTestEnv(), ...env });
}

/**
 * A collaboration host (and a second replica on demand) trusting the tokens of `users`: the API host's
 * JWKS, from a local issuer (startStack) or the API host itself (startCrossHostStack).
 */
export interface Stack {
  collab: CollabTestService;
  namespace: string;
  /** A new user with an access token the collaboration host accepts. */
  newUser(data?: Record<string, string>): Promise<TestUser>;
  /** Another collaboration process on the same database and broker namespace (a second replica). */
  startCollabReplica(env?: Record<string, string>): Promise<CollabTestService>;
  stop(): Promise<void>;
}

/** Both hosts, on one AMQP namespace, so `user.updated.v1`, revocations and notifications travel. */
export interface CrossHostStack extends Stack {
  api: ApiTestService;
  apiUrl: string;
}

async function collabWith(
  namespace: string,
  jwksUrl: string,
  env: Record<string, string> = {},
): Promise<Pick<Stack, 'collab' | 'startCollabReplica'> & { stopCollab(): Promise<void> }> {
  const collabEnv = { AMQP_NAMESPACE: namespace, AUTH_JWKS_URL: jwksUrl, ...env };
  const collab = await startTestService(collabService, loadCollabConfig, collabEnv);
  const replicas: CollabTestService[] = [];
  return {
    collab,
    async startCollabReplica(extra = {}) {
      const replica = await startTestService(collabService, loadCollabConfig, {
        ...collabEnv,
        DATABASE_URL: collab.deps.config.DATABASE_URL as string,
        ...extra,
      });
      replicas.push(replica);
      return replica;
    },
    async stopCollab() {
      for (const replica of replicas) await replica.stop();
      await collab.stop();
    },
  };
}

/**
 * The collaboration host alone: users are minted by a local token issuer with the API host's claims,
 * so no API host is booted (tests of one host's behaviour).
 */
export async function startStack(env: { collab?: Record<string, string> } = {}): Promise<Stack> {
  const namespace = `test-${randomBytes(4).toString('hex')}.`;
  const issuer = await startTokenIssuer();
  const { collab, startCollabReplica, stopCollab } = await collabWith(namespace, issuer.jwksUrl, env.collab);
  return {
    collab,
    namespace,
    newUser: async (data) => issuer.user(data),
    startCollabReplica,
    async stop() {
      await stopCollab();
      await issuer.close();
    },
  };
}

/**
 * The API host (listening on a free port, for its JWKS) and a collaboration host verifying its
 * tokens: for what crosses the hosts (sign-up, revocations, profile events, notifications).
 */
export async function startCrossHostStack(
  env: { api?: Record<string, string>; collab?: Record<string, string> } = {},
): Promise<CrossHostStack> {
  const namespace = `test-${randomBytes(4).toString('hex')}.`;
  const api = await startApi({ AMQP_NAMESPACE: namespace, ...env.api });
  const server: Server = createServer(api.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { collab, startCollabReplica, stopCollab } = await collabWith(
    namespace,
    `${apiUrl}/.well-known/jwks.json`,
    env.collab,
  );
  return {
    api,
    apiUrl,
    collab,
    namespace,
    newUser: (data) => signUp(api.app, data),
    startCollabReplica,
    async stop() {
      await stopCollab();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await api.stop();
    },
  };
}

/** A user the collaboration host accepts (minted, or signed up on the API host of a cross-host stack). */
export function newUser(stack: Stack, data: Record<string, string> = {}): Promise<TestUser> {
  return stack.newUser(data);
}

/** Supertest on the collaboration host with the user's bearer token (the API host kit's helper). */
export const collabAs = as;

export type { ApiConfig, TestUser };

/** A signed-up user the collaboration host knows (`/v1/users/init` done). */
export async function collabMember(stack: Stack): Promise<TestUser> {
  const user = await newUser(stack);
  await as(stack.collab.app, user).post('/v1/users/init').send({}).expect(200);
  return user;
}

/** A workspace of its own with one member per role. */
export interface Team {
  workspace: string;
  id: string;
  owner: TestUser;
  manager: TestUser;
  engineer: TestUser;
  viewer: TestUser;
}

export async function teamWorkspace(stack: Stack, prefix: string): Promise<Team> {
  const [owner, manager, engineer, viewer] = await Promise.all([1, 2, 3, 4].map(() => collabMember(stack)));
  const { id, name: workspace } = await createWorkspace(stack.collab.app, owner, prefix);
  const roles: [TestUser, WorkspaceRole][] = [
    [manager, 'manager'],
    [engineer, 'engineer'],
    [viewer, 'viewer'],
  ];
  await addMembers(stack, id, roles);
  return { workspace, id, owner, manager, engineer, viewer };
}

/**
 * Memberships straight through the workspaces service (no invitation emails): for tests about what
 * members may do, not about how they join.
 */
export async function addMembers(
  stack: Stack,
  workspaceId: string,
  members: [TestUser, WorkspaceRole][],
): Promise<void> {
  const { deps } = stack.collab;
  const { workspaces } = collabService.exportsOf<WorkspacesExports>(deps, 'workspaces');
  await deps.dataSource.transaction(async (manager) => {
    for (const [user, role] of members) await workspaces.addMember(manager, workspaceId, user.user.id, role);
  });
}

/** Emails the collaboration host asked the notifier to send in a workspace, by template, oldest first. */
export async function mailedTo(stack: Stack, workspace: string, template: string): Promise<string[]> {
  const rows: { to: string }[] = await stack.collab.deps.dataSource.query(
    `SELECT envelope->'data'->>'to' AS to FROM outbox
      WHERE envelope->>'workspace' = $1 AND envelope->'data'->>'template' = $2 ORDER BY created_at`,
    [workspace, template],
  );
  return rows.map((r) => r.to);
}
