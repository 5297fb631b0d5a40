import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WorkspaceRole } from '@hwp/contracts';
import { startTestService, type TestService } from '@hwp/platform/test-kit';
import type { ApiConfig } from '../../../api-service/src/config';
import {
  type ApiTestService,
  as,
  signUp,
  startApi,
  type TestUser,
} from '../../../api-service/test/support/api-test-kit';
import { type CollabConfig, loadCollabConfig } from '../../src/config';
import { WorkspacesService } from '../../src/modules/workspaces/workspaces.service';
import { collabService } from '../../src/service';

export type CollabTestService = TestService<CollabConfig>;

/**
 * The API host (listening on a free port, for its JWKS) and a collaboration host verifying its
 * tokens, on one AMQP namespace so `user.updated.v1` and notifications travel between them.
 */
export interface Stack {
  api: ApiTestService;
  apiUrl: string;
  collab: CollabTestService;
  namespace: string;
  /** Another collaboration process on the same database and broker namespace (a second replica). */
  startCollabReplica(env?: Record<string, string>): Promise<CollabTestService>;
  stop(): Promise<void>;
}

export async function startStack(
  env: { api?: Record<string, string>; collab?: Record<string, string> } = {},
): Promise<Stack> {
  const namespace = `test-${randomBytes(4).toString('hex')}.`;
  const api = await startApi({ AMQP_NAMESPACE: namespace, ...env.api });
  const server: Server = createServer(api.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const collabEnv = {
    AMQP_NAMESPACE: namespace,
    AUTH_JWKS_URL: `${apiUrl}/.well-known/jwks.json`,
    ...env.collab,
  };
  const collab = await startTestService(collabService, loadCollabConfig, collabEnv);
  const replicas: CollabTestService[] = [];
  return {
    api,
    apiUrl,
    collab,
    namespace,
    async startCollabReplica(extra = {}) {
      const replica = await startTestService(collabService, loadCollabConfig, {
        ...collabEnv,
        DATABASE_URL: collab.deps.config.DATABASE_URL as string,
        ...extra,
      });
      replicas.push(replica);
      return replica;
    },
    async stop() {
      for (const replica of replicas) await replica.stop();
      await collab.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await api.stop();
    },
  };
}

/** A signed-up API host user, for the collaboration host. */
export function newUser(stack: Stack, data: Record<string, string> = {}): Promise<TestUser> {
  return signUp(stack.api.app, data);
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
  const workspace = `${prefix}-${randomBytes(5).toString('hex')}`;
  await as(stack.collab.app, owner).post('/v1/workspaces').send({ name: workspace }).expect(201);
  const dataSource = stack.collab.deps.dataSource;
  const [{ id }] = await dataSource.query('SELECT id FROM workspaces WHERE name = $1', [workspace]);
  const roles: [TestUser, WorkspaceRole][] = [
    [manager, 'manager'],
    [engineer, 'engineer'],
    [viewer, 'viewer'],
  ];
  const service = new WorkspacesService(dataSource);
  await dataSource.transaction(async (manager) => {
    for (const [user, role] of roles) await service.addMember(manager, id, user.user.id, role);
  });
  return { workspace, id, owner, manager, engineer, viewer };
}
