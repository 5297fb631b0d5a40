import {
  CreatePartVersionRequest,
  ErrorBodyDto,
  PartVersion,
  PartVersionActionRequest,
  PartVersionList,
  PartWorkspaceQuery,
  RejectPartVersionRequest,
  UpdatePartVersionRequest,
  type WorkspaceRole,
} from '@hwp/contracts';
import type { RawQuery } from '@hwp/platform';
import { fromResource } from '../../workspace-access/workspace-access';
import { type MemberRouteSpec, memberRoute, readRoute } from '../../workspace-access/workspace-route';
import type { PartVersionsService } from '../part-versions.service';
import { acceptSnakeCase, CONFLICT, NOT_FOUND, TAGS } from './part-routing';

export const createVersion = (versions: PartVersionsService) =>
  memberRoute({
    method: 'post',
    path: '/v1/parts/:id/versions',
    summary: 'Create a draft version of a part',
    tags: TAGS,
    role: 'engineer',
    workspace: fromResource('part'),
    before: [acceptSnakeCase],
    body: CreatePartVersionRequest,
    status: 201,
    responses: {
      201: { description: 'Created as draft', schema: PartVersion },
      404: NOT_FOUND,
      409: { description: 'The revision exists for this part', schema: ErrorBodyDto },
    },
    handler: ({ body, params, user, workspace }) => versions.create(user, workspace, params.id, body),
  });

export const listVersions = (versions: PartVersionsService) =>
  readRoute({
    method: 'get',
    path: '/v1/parts/:id/versions',
    summary: 'The versions of a part, newest first',
    tags: TAGS,
    workspace: fromResource('part'),
    query: PartWorkspaceQuery,
    responses: { 200: { description: 'Versions', schema: PartVersionList }, 404: NOT_FOUND },
    handler: ({ params, workspace }) => versions.list(workspace, params.id),
  });

export const editVersion = (versions: PartVersionsService) =>
  memberRoute({
    method: 'patch',
    path: '/v1/parts/:id/versions/:versionId',
    summary: 'Edit a draft or rejected version (a rejected one returns to draft)',
    description:
      'Approved versions are immutable and versions in review are frozen: 409. Create a new version instead.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromResource('part'),
    before: [acceptSnakeCase],
    body: UpdatePartVersionRequest,
    responses: { 200: { description: 'The version', schema: PartVersion }, 404: NOT_FOUND, 409: CONFLICT },
    handler: ({ body, params, user, workspace }) =>
      versions.edit(user, workspace, params.id, params.versionId, body),
  });

/** A review move: `POST /v1/parts/:id/versions/:versionId/<action>`. */
function transition<Body>(
  spec: { action: string; role: WorkspaceRole; summary: string } & Pick<
    MemberRouteSpec<Body, RawQuery>,
    'body' | 'handler'
  >,
) {
  const { action, role, summary, body, handler } = spec;
  return memberRoute({
    method: 'post',
    path: `/v1/parts/:id/versions/:versionId/${action}`,
    summary,
    description: 'Other moves: 409. Emits a `part` event. `workspace` in the query or the body.',
    tags: TAGS,
    role,
    workspace: fromResource('part'),
    body,
    responses: { 200: { description: 'The version', schema: PartVersion }, 404: NOT_FOUND, 409: CONFLICT },
    handler,
  });
}

export const submitVersion = (versions: PartVersionsService) =>
  transition({
    action: 'submit',
    role: 'engineer',
    summary: 'Submit a draft version for review (draft -> in_review)',
    body: PartVersionActionRequest,
    handler: ({ params, user, workspace }) => versions.submit(user, workspace, params.id, params.versionId),
  });

export const approveVersion = (versions: PartVersionsService) =>
  transition({
    action: 'approve',
    role: 'manager',
    summary: 'Approve a version in review (in_review -> approved)',
    body: PartVersionActionRequest,
    handler: ({ params, user, workspace }) => versions.approve(user, workspace, params.id, params.versionId),
  });

export const rejectVersion = (versions: PartVersionsService) =>
  transition({
    action: 'reject',
    role: 'manager',
    summary: 'Reject a version in review (in_review -> rejected)',
    body: RejectPartVersionRequest,
    handler: ({ body, params, user, workspace }) =>
      versions.reject(user, workspace, params.id, params.versionId, body.reason),
  });
