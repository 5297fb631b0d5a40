import {
  CreatePartRequest,
  ErrorBodyDto,
  ListPartsQuery,
  Part,
  PartDetail,
  PartList,
  PartWorkspaceQuery,
  UpdatePartRequest,
} from '@hwp/contracts';
import { fromBody, fromQuery, fromResource } from '../../workspace-access/workspace-access';
import { memberRoute, readRoute } from '../../workspace-access/workspace-route';
import type { PartsService } from '../parts.service';
import { acceptSnakeCase, NOT_FOUND, TAGS } from './part-routing';

export const createPart = (parts: PartsService) =>
  memberRoute({
    method: 'post',
    path: '/v1/parts',
    summary: 'Create a part',
    description:
      'Snake_case spellings of the document (`unit_cost`, `manufacturer_part_number`, ...) are accepted. Without ' +
      '`partNumber`, the next number of the domain’s numbering rule is given (400 when the domain has no rule); a given ' +
      'number must match the rule (400) and be unused in the workspace, case-insensitively (409). Attributes are ' +
      'checked against the domain template (400 naming what is missing); `cas_number` must pass the CAS check digit; ' +
      '`currency` must be an ISO 4217 code. A lifecycle other than `prototype` needs manager+.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromBody('workspace'),
    before: [acceptSnakeCase],
    body: CreatePartRequest,
    status: 201,
    responses: {
      201: { description: 'Created', schema: Part },
      409: { description: 'The part number exists in the workspace', schema: ErrorBodyDto },
    },
    handler: ({ body, user, workspace }) => parts.create(user, workspace, body),
  });

export const listParts = (parts: PartsService) =>
  readRoute({
    method: 'get',
    path: '/v1/parts',
    summary: 'Search the parts of a workspace',
    description:
      '`q` matches part_number by prefix, name by containment and manufacturer_part_number by prefix ' +
      '(case-insensitive); `tag` parts whose tags contain it. `sort` (default part_number) with `dir`; ties are ' +
      'broken by id so paging is stable.',
    tags: TAGS,
    workspace: fromQuery('workspace'),
    query: ListPartsQuery,
    responses: { 200: { description: 'A page of parts', schema: PartList } },
    handler: ({ query, workspace }) => parts.list(workspace, query),
  });

export const partDetail = (parts: PartsService) =>
  readRoute({
    method: 'get',
    path: '/v1/parts/:id',
    summary: 'A part with its versions and audit history',
    tags: TAGS,
    workspace: fromResource('part'),
    query: PartWorkspaceQuery,
    responses: { 200: { description: 'The part', schema: PartDetail }, 404: NOT_FOUND },
    handler: ({ params, workspace }) => parts.detail(workspace, params.id),
  });

export const updatePart = (parts: PartsService) =>
  memberRoute({
    method: 'patch',
    path: '/v1/parts/:id',
    summary: 'Update a part; changing its lifecycle needs manager+',
    description:
      'Lifecycle moves (DECISIONS.md section 5): prototype -> released | obsolete, released -> on_hold | obsolete, ' +
      'on_hold -> released | obsolete; obsolete is final. Another move: 409. A lifecycle change by an engineer: 403. ' +
      '`workspace` in the query or the body.',
    tags: TAGS,
    role: 'engineer',
    workspace: fromResource('part'),
    before: [acceptSnakeCase],
    body: UpdatePartRequest,
    responses: {
      200: { description: 'The updated part', schema: Part },
      403: { description: 'Below engineer, or a lifecycle change below manager', schema: ErrorBodyDto },
      404: NOT_FOUND,
      409: { description: 'A lifecycle move that is not allowed', schema: ErrorBodyDto },
    },
    handler: ({ body, params, user, workspace }) => parts.update(user, workspace, params.id, body),
  });
