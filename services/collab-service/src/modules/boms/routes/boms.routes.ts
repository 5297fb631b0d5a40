import {
  Bom,
  BomActionRequest,
  BomDetail,
  BomDiff,
  BomDiffQuery,
  BomList,
  BomWorkspaceQuery,
  CostRollup,
  CreateBomRequest,
  DeriveMbomRequest,
  EffectivityReport,
  ErrorBodyDto,
  ListBomsQuery,
  RejectBomRequest,
  SetAlternatesRequest,
  UpsertBomItemsRequest,
  ValidateEffectivityRequest,
  WhereUsedList,
  WhereUsedQuery,
  type WorkspaceRole,
} from '@hwp/contracts';
import type { RawQuery } from '@hwp/platform';
import { fromBody, fromQuery, fromResource } from '../../workspace-access/workspace-access';
import { type MemberRouteSpec, memberRoute, readRoute } from '../../workspace-access/workspace-route';
import type { BomLinesService } from '../bom-lines.service';
import type { BomStructureService } from '../bom-structure.service';
import { streamBomDetail } from '../bom-tree-json';
import type { BomsService } from '../boms.service';
import { acceptSnakeCase, INVALID, NOT_DRAFT, NOT_FOUND, TAGS } from './bom-routing';

export const createBom = (boms: BomsService) =>
  memberRoute({
    method: 'post',
    path: '/v1/boms',
    summary: 'Create a draft BOM of an assembly part',
    description: 'The revision is unique per assembly and type (409). Emits a `bom` event.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromBody('workspace'),
    before: [acceptSnakeCase],
    body: CreateBomRequest,
    status: 201,
    responses: {
      201: { description: 'Created as draft', schema: Bom },
      404: NOT_FOUND,
      409: { description: 'The revision exists for this assembly and type', schema: ErrorBodyDto },
    },
    handler: ({ body, user, workspace }) => boms.create(user, workspace, body),
  });

export const listBoms = (boms: BomsService) =>
  readRoute({
    method: 'get',
    path: '/v1/boms',
    summary: 'BOMs of the workspace, newest first',
    tags: TAGS,
    workspace: fromQuery('workspace'),
    query: ListBomsQuery,
    responses: { 200: { description: 'A page of BOM headers', schema: BomList } },
    handler: ({ query, workspace }) => boms.list(workspace, query),
  });

export const bomDetail = (boms: BomsService) =>
  readRoute({
    method: 'get',
    path: '/v1/boms/:id',
    summary: 'A BOM: its header and its multi-level tree',
    description:
      'Depth first in sort order. A child part with its own BOM of the same type (the approved one, else the ' +
      'latest) is expanded under its line; a part that would contain itself is marked with a `cycle` warning and ' +
      'not expanded. Each node has its quantity per parent, the extended quantity per top assembly, its ' +
      'extended cost per currency and warnings (non-compliant part, missing cost, designator count).',
    tags: TAGS,
    workspace: fromResource('bom'),
    query: BomWorkspaceQuery,
    responses: { 200: { description: 'Header and tree', schema: BomDetail }, 404: NOT_FOUND },
    handler: async ({ params, res, workspace }) => {
      const { header, walk } = await boms.detailWalk(workspace, params.id);
      await streamBomDetail(res, header, walk);
    },
  });

export const upsertItems = (lines: BomLinesService) =>
  memberRoute({
    method: 'post',
    path: '/v1/boms/:id/items',
    summary: 'Add, change and delete lines of a draft BOM, all or none',
    description:
      '`_op: upsert` (default) creates a line (a new or no `id`) or changes the line with that `id`; `_op: delete` ' +
      'removes it with the lines nested under it. `refdes` ranges expand (`R1-R4`). A change that would make ' +
      'an assembly contain itself is refused with 409 naming the cycle. A rejected BOM returns to draft; ' +
      'others answer 409. Emits a `bom` event.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromResource('bom'),
    before: [acceptSnakeCase],
    body: UpsertBomItemsRequest,
    responses: {
      200: { description: 'The BOM after the change', schema: BomDetail },
      400: INVALID,
      403: { description: 'Approving an alternate needs manager+', schema: ErrorBodyDto },
      404: NOT_FOUND,
      409: NOT_DRAFT,
    },
    handler: ({ body, params, user, workspace }) => lines.upsert(user, workspace, params.id, body),
  });

/** A review move: `POST /v1/boms/:id/<action>`. */
function transition<Body>(
  spec: { action: string; role: WorkspaceRole; summary: string } & Pick<
    MemberRouteSpec<Body, RawQuery>,
    'body' | 'handler'
  >,
) {
  const { action, role, summary, body, handler } = spec;
  return memberRoute({
    method: 'post',
    path: `/v1/boms/:id/${action}`,
    summary,
    description:
      'Other moves: 409. Emits a `bom` event; submitting emails the managers, approving or rejecting emails ' +
      'the submitter. `workspace` in the query or the body.',
    tags: TAGS,
    role,
    workspace: fromResource('bom'),
    body,
    responses: { 200: { description: 'The BOM', schema: Bom }, 404: NOT_FOUND, 409: NOT_DRAFT },
    handler,
  });
}

export const submitBom = (boms: BomsService) =>
  transition({
    action: 'submit',
    role: 'engineer',
    summary: 'Submit a draft BOM for review (draft -> in_review)',
    body: BomActionRequest,
    handler: ({ params, user, workspace }) => boms.submit(user, workspace, params.id),
  });

export const approveBom = (boms: BomsService) =>
  transition({
    action: 'approve',
    role: 'manager',
    summary: 'Approve a BOM in review (in_review -> approved)',
    body: BomActionRequest,
    handler: ({ params, user, workspace }) => boms.approve(user, workspace, params.id),
  });

export const rejectBom = (boms: BomsService) =>
  transition({
    action: 'reject',
    role: 'manager',
    summary: 'Reject a BOM in review (in_review -> rejected)',
    body: RejectBomRequest,
    handler: ({ body, params, user, workspace }) => boms.reject(user, workspace, params.id, body.reason),
  });

export const bomDiff = (structure: BomStructureService) =>
  readRoute({
    method: 'get',
    path: '/v1/boms/:id/diff',
    summary: 'Lines added, removed and changed between two revisions',
    description:
      'Both revisions are of the BOM’s assembly and type. Lines are keyed by child part number (with the ' +
      'designators when a part has several lines); changes are per field: qty, uom, refdes, notes, ' +
      'alternates, effectivity.',
    tags: TAGS,
    workspace: fromResource('bom'),
    query: BomDiffQuery,
    responses: { 200: { description: 'The diff', schema: BomDiff }, 404: NOT_FOUND },
    handler: ({ params, query, workspace }) => structure.diff(workspace, params.id, query),
  });

export const costRollup = (boms: BomsService) =>
  readRoute({
    method: 'get',
    path: '/v1/boms/:id/cost-rollup',
    summary: 'Multi-level cost rollup',
    description:
      'Extended cost = qty x (the child’s own BOM rollup when it has one, else its unit cost), summed up the ' +
      'tree. Totals are per currency (never converted); leaves without a cost are listed.',
    tags: TAGS,
    workspace: fromResource('bom'),
    query: BomWorkspaceQuery,
    responses: { 200: { description: 'The rollup', schema: CostRollup }, 404: NOT_FOUND },
    handler: ({ params, workspace }) => boms.costRollup(workspace, params.id),
  });

export const setAlternates = (lines: BomLinesService) =>
  memberRoute({
    method: 'post',
    path: '/v1/boms/:id/items/:itemId/alternates',
    summary: 'Replace the alternates of a line',
    description:
      'Engineers propose (`conditional`, `rejected`); only manager+ may set `approved` (403 otherwise). Draft ' +
      'BOMs only (409). Emits a `bom` event.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromResource('bom'),
    before: [acceptSnakeCase],
    body: SetAlternatesRequest,
    responses: {
      200: { description: 'The BOM after the change', schema: BomDetail },
      400: INVALID,
      403: { description: 'Approving an alternate needs manager+', schema: ErrorBodyDto },
      404: NOT_FOUND,
      409: NOT_DRAFT,
    },
    handler: ({ body, params, user, workspace }) =>
      lines.setAlternates(user, workspace, params.id, params.itemId, body),
  });

export const deriveMbom = (structure: BomStructureService) =>
  memberRoute({
    method: 'post',
    path: '/v1/boms/:id/derive-mbom',
    summary: 'Derive a manufacturing BOM from an engineering BOM',
    description:
      'Lines are copied with alternates and effectivity; lines marked `attributes.phantom: true` are replaced ' +
      'by their own lines. The new BOM links back through `sourceBomId`.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromResource('bom'),
    before: [acceptSnakeCase],
    body: DeriveMbomRequest,
    status: 201,
    responses: {
      201: { description: 'The manufacturing BOM (draft)', schema: Bom },
      404: NOT_FOUND,
      409: { description: 'Not an engineering BOM, or the revision exists', schema: ErrorBodyDto },
    },
    handler: ({ body, params, user, workspace }) => structure.deriveMbom(user, workspace, params.id, body),
  });

export const validateEffectivity = (structure: BomStructureService) =>
  memberRoute({
    method: 'post',
    path: '/v1/boms/:id/effectivity/validate',
    summary: 'Check an effectivity against the other lines of the same part or designators',
    description:
      'Compares with the lines under the same parent that have the same child part or share a designator; ' +
      'each one that would apply at the same date, serial and lot is named.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromResource('bom'),
    before: [acceptSnakeCase],
    body: ValidateEffectivityRequest,
    responses: {
      200: { description: 'Valid, or the overlaps', schema: EffectivityReport },
      400: INVALID,
      404: NOT_FOUND,
    },
    handler: ({ body, params, workspace }) => structure.validateEffectivity(workspace, params.id, body),
  });

export const whereUsed = (structure: BomStructureService) =>
  readRoute({
    method: 'get',
    path: '/v1/parts/:id/where-used',
    summary: 'Assemblies whose BOMs use the part',
    description:
      '`levels=1` (default): the assemblies whose current BOM (approved, else latest, per type) lists the part. ' +
      '`levels=all`: up to the top assemblies, each path once, with the quantity along it.',
    tags: ['parts'],
    workspace: fromResource('part'),
    query: WhereUsedQuery,
    responses: { 200: { description: 'Assemblies', schema: WhereUsedList }, 404: NOT_FOUND },
    handler: ({ params, query, workspace }) => structure.whereUsed(workspace, params.id, query.levels ?? '1'),
  });
