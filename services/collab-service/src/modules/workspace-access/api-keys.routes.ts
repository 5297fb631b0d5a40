import { ApiKey, ApiKeyList, CreateApiKeyRequest, CreatedApiKey, ErrorBodyDto } from '@hwp/contracts';
import type { ApiKeys } from './api-keys';
import { fromParam } from './workspace-access';
import { memberRoute } from './workspace-route';

const TAGS = ['workspaces'];

export const createApiKey = (keys: ApiKeys) =>
  memberRoute({
    method: 'post',
    path: '/v1/workspaces/:name/api-keys',
    summary: 'Create a read-only API key for integrations (shown once)',
    description:
      'The key is sent as `Authorization: Bearer <key>` and reads this workspace’s BOMs, parts and exports ' +
      '(the operations marked `x-api-key`); anything else answers 403, a revoked key 401. Only its sha256 is ' +
      'stored: the answer is the one time the key is shown.',
    tags: TAGS,
    role: 'manager',
    workspace: fromParam('name'),
    body: CreateApiKeyRequest,
    status: 201,
    responses: { 201: { description: 'The key, with its secret', schema: CreatedApiKey } },
    handler: ({ body, user, workspace }) => keys.create(user, workspace, body.name),
  });

export const listApiKeys = (keys: ApiKeys) =>
  memberRoute({
    method: 'get',
    path: '/v1/workspaces/:name/api-keys',
    summary: 'The workspace’s API keys (never their secrets), with their last use',
    tags: TAGS,
    role: 'manager',
    workspace: fromParam('name'),
    responses: { 200: { description: 'Keys, oldest first', schema: ApiKeyList } },
    handler: ({ workspace }) => keys.list(workspace),
  });

export const revokeApiKey = (keys: ApiKeys) =>
  memberRoute({
    method: 'delete',
    path: '/v1/workspaces/:name/api-keys/:keyId',
    summary: 'Revoke an API key (at once and for good)',
    tags: TAGS,
    role: 'manager',
    workspace: fromParam('name'),
    responses: {
      200: { description: 'The revoked key', schema: ApiKey },
      404: { description: 'No such key in the workspace', schema: ErrorBodyDto },
    },
    handler: ({ params, workspace }) => keys.revoke(workspace, params.keyId),
  });
