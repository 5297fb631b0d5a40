import {
  BomSettings,
  CreatePartRequest,
  CreatePartVersionRequest,
  ErrorBodyDto,
  ListPartsQuery,
  PART_SNAKE_CASE_FIELDS,
  Part,
  PartDetail,
  PartList,
  PartVersion,
  PartVersionActionRequest,
  PartVersionList,
  PartWorkspaceQuery,
  RejectPartVersionRequest,
  UpdateBomSettingsRequest,
  UpdatePartRequest,
  UpdatePartVersionRequest,
  WhereUsedList,
} from '@hwp/contracts';
import type { Logger } from '@hwp/platform';
import type { RequestHandler } from 'express';
import type { DataSource } from 'typeorm';
import type { CollabConfig } from '../../config';
import { currentUser } from '../identity/identity.module';
import {
  fromBody,
  fromParam,
  fromQuery,
  requestWorkspace,
  type WorkspaceSource,
} from '../workspaces/workspace-access';
import { type CollabRouting, memberRoute } from '../workspaces/workspace-route';
import { BomSettingsService } from './bom-settings.service';
import { mountPartImportRoute } from './import/part-import.routes';
import { PartImportService } from './import/part-import.service';
import { PartVersionsService } from './part-versions.service';
import { type PartEvents, PartsService } from './parts.service';

const TAGS = ['parts'];

/** Requests may use the snake_case names of the interface document (DECISIONS.md section 0). */
export const acceptSnakeCase: RequestHandler = (req, _res, next) => {
  const body = req.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const [snake, camel] of Object.entries(PART_SNAKE_CASE_FIELDS)) {
      if (snake in body && !(camel in body)) {
        body[camel] = body[snake];
        delete body[snake];
      }
    }
  }
  next();
};

/** Routes on one part name the workspace in the query or, for writes, in the body. */
const queryOrBody: WorkspaceSource = (req) => fromQuery('workspace')(req) ?? fromBody('workspace')(req);

const CONFLICT = { description: 'The move is not allowed from the current status', schema: ErrorBodyDto };
const NOT_FOUND = { description: 'No such part (or version) in the workspace', schema: ErrorBodyDto };

export interface PartsModule {
  parts: PartsService;
  versions: PartVersionsService;
  settings: BomSettingsService;
  imports: PartImportService;
}

/** Parts (section 4.6) and the workspace BOM settings (section 4.7). */
export function mountPartRoutes(
  deps: { dataSource: DataSource; events: PartEvents; logger: Logger; config: CollabConfig },
  routing: CollabRouting,
) {
  const { config } = deps;
  const settings = new BomSettingsService(deps.dataSource);
  const parts = new PartsService(deps.dataSource, settings, deps.events);
  const versions = new PartVersionsService(deps.dataSource, parts, deps.events);
  const maxBytes = config.IMPORT_MAX_MB * 1024 * 1024;
  const imports = new PartImportService(deps.dataSource, settings, deps.events, deps.logger, {
    maxBytes,
    maxRows: config.IMPORT_MAX_ROWS,
    timeoutMs: config.IMPORT_TIMEOUT_MS,
    concurrency: config.IMPORT_CONCURRENCY,
    queueWaitMs: config.IMPORT_QUEUE_WAIT_MS,
  });
  mountPartImportRoute(routing, imports, maxBytes);
  const param = (req: { params: Record<string, string | string[]> }, name: string) =>
    String(req.params[name]);

  memberRoute(routing, {
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
    responses: {
      201: { description: 'Created', schema: Part },
      409: { description: 'The part number exists in the workspace', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      const body = req.body as CreatePartRequest;
      res.status(201).json(await parts.create(currentUser(req), requestWorkspace(req), body));
    },
  });

  memberRoute(routing, {
    method: 'get',
    path: '/v1/parts',
    summary: 'Search the parts of a workspace',
    description:
      '`q` matches part_number by prefix, name by containment and manufacturer_part_number by prefix ' +
      '(case-insensitive); `tag` parts whose tags contain it. `sort` (default part_number) with `dir`; ties are ' +
      'broken by id so paging is stable.',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: ListPartsQuery,
    responses: { 200: { description: 'A page of parts', schema: PartList } },
    handler: async (req, res) => {
      res.json(await parts.list(requestWorkspace(req), res.locals.query as ListPartsQuery));
    },
  });

  memberRoute(routing, {
    method: 'get',
    path: '/v1/parts/:id',
    summary: 'A part with its versions and audit history',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: PartWorkspaceQuery,
    responses: { 200: { description: 'The part', schema: PartDetail }, 404: NOT_FOUND },
    handler: async (req, res) => {
      res.json(await parts.detail(requestWorkspace(req), param(req, 'id')));
    },
  });

  memberRoute(routing, {
    method: 'patch',
    path: '/v1/parts/:id',
    summary: 'Update a part; changing its lifecycle needs manager+',
    description:
      'Lifecycle moves (DECISIONS.md section 5): prototype -> released | obsolete, released -> on_hold | obsolete, ' +
      'on_hold -> released | obsolete; obsolete is final. Another move: 409. A lifecycle change by an engineer: 403. ' +
      '`workspace` in the query or the body.',
    tags: TAGS,
    role: 'engineer',
    workspace: queryOrBody,
    before: [acceptSnakeCase],
    body: UpdatePartRequest,
    responses: {
      200: { description: 'The updated part', schema: Part },
      403: { description: 'Below engineer, or a lifecycle change below manager', schema: ErrorBodyDto },
      404: NOT_FOUND,
      409: { description: 'A lifecycle move that is not allowed', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      const body = req.body as UpdatePartRequest;
      res.json(await parts.update(currentUser(req), requestWorkspace(req), param(req, 'id'), body));
    },
  });

  memberRoute(routing, {
    method: 'post',
    path: '/v1/parts/:id/versions',
    summary: 'Create a draft version of a part',
    tags: TAGS,
    role: 'engineer',
    workspace: queryOrBody,
    before: [acceptSnakeCase],
    body: CreatePartVersionRequest,
    responses: {
      201: { description: 'Created as draft', schema: PartVersion },
      404: NOT_FOUND,
      409: { description: 'The revision exists for this part', schema: ErrorBodyDto },
    },
    handler: async (req, res) => {
      const body = req.body as CreatePartVersionRequest;
      res
        .status(201)
        .json(await versions.create(currentUser(req), requestWorkspace(req), param(req, 'id'), body));
    },
  });

  memberRoute(routing, {
    method: 'get',
    path: '/v1/parts/:id/versions',
    summary: 'The versions of a part, newest first',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: PartWorkspaceQuery,
    responses: { 200: { description: 'Versions', schema: PartVersionList }, 404: NOT_FOUND },
    handler: async (req, res) => {
      res.json(await versions.list(requestWorkspace(req), param(req, 'id')));
    },
  });

  memberRoute(routing, {
    method: 'patch',
    path: '/v1/parts/:id/versions/:versionId',
    summary: 'Edit a draft or rejected version (a rejected one returns to draft)',
    description:
      'Approved versions are immutable and versions in review are frozen: 409. Create a new version instead.',
    tags: TAGS,
    role: 'engineer',
    workspace: queryOrBody,
    before: [acceptSnakeCase],
    body: UpdatePartVersionRequest,
    responses: { 200: { description: 'The version', schema: PartVersion }, 404: NOT_FOUND, 409: CONFLICT },
    handler: async (req, res) => {
      const body = req.body as UpdatePartVersionRequest;
      const user = currentUser(req);
      res.json(
        await versions.edit(user, requestWorkspace(req), param(req, 'id'), param(req, 'versionId'), body),
      );
    },
  });

  const transitions = [
    { action: 'submit', role: 'engineer', summary: 'Submit a draft version for review (draft -> in_review)' },
    { action: 'approve', role: 'manager', summary: 'Approve a version in review (in_review -> approved)' },
    { action: 'reject', role: 'manager', summary: 'Reject a version in review (in_review -> rejected)' },
  ] as const;
  for (const { action, role, summary } of transitions) {
    memberRoute(routing, {
      method: 'post',
      path: `/v1/parts/:id/versions/:versionId/${action}`,
      summary,
      description: 'Other moves: 409. Emits a `part` event. `workspace` in the query or the body.',
      tags: TAGS,
      role,
      workspace: queryOrBody,
      body: action === 'reject' ? RejectPartVersionRequest : PartVersionActionRequest,
      responses: { 200: { description: 'The version', schema: PartVersion }, 404: NOT_FOUND, 409: CONFLICT },
      handler: async (req, res) => {
        const args = [
          currentUser(req),
          requestWorkspace(req),
          param(req, 'id'),
          param(req, 'versionId'),
        ] as const;
        if (action === 'reject') {
          res.json(await versions.reject(...args, (req.body as RejectPartVersionRequest).reason));
        } else {
          res.json(await versions[action](...args));
        }
      },
    });
  }

  memberRoute(routing, {
    method: 'get',
    path: '/v1/parts/:id/where-used',
    summary: 'Assemblies whose BOMs reference the part',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: PartWorkspaceQuery,
    responses: { 200: { description: 'Assemblies', schema: WhereUsedList }, 404: NOT_FOUND },
    handler: async (req, res) => {
      res.json(await parts.whereUsed(requestWorkspace(req), param(req, 'id')));
    },
  });

  memberRoute(routing, {
    method: 'get',
    path: '/v1/workspaces/:name/bom-settings',
    summary: 'Numbering rules and domain templates of a workspace',
    tags: ['boms'],
    role: 'viewer',
    workspace: fromParam('name'),
    responses: {
      200: { description: 'The settings (defaults until a manager stores some)', schema: BomSettings },
    },
    handler: async (req, res) => {
      res.json(await settings.get(requestWorkspace(req)));
    },
  });

  memberRoute(routing, {
    method: 'post',
    path: '/v1/workspaces/:name/bom-settings',
    summary: 'Store numbering rules and/or domain templates',
    description:
      '`numbering_rules` (or `numberingRules`): per domain `{ prefix, width }`, part numbers `<prefix><width ' +
      'digits>`. `domain_templates` (or `domainTemplates`): per domain `{ required: [names], enforce (default ' +
      'true), schema? }`, `schema` a JSON Schema the attributes must satisfy. Each field given replaces the stored one. ' +
      'Every regular expression of a schema (`pattern` values and `patternProperties` keys, at any depth) must be valid ' +
      'with the `u` flag, at most 512 characters, free of lookaround and backreferences (patterns run on a linear-time ' +
      'engine) and unable to backtrack catastrophically (such as `^(a+)+$`); each one that is not is a 400 error naming ' +
      'its path, e.g. `domainTemplates.other.schema.properties.code.pattern`.',
    tags: ['boms'],
    role: 'manager',
    workspace: fromParam('name'),
    before: [acceptSnakeCase],
    body: UpdateBomSettingsRequest,
    responses: {
      200: { description: 'The stored settings', schema: BomSettings },
      400: {
        description: 'Invalid settings; `errors` names each bad rule, template or pattern by its path',
        schema: ErrorBodyDto,
      },
    },
    handler: async (req, res) => {
      const body = req.body as UpdateBomSettingsRequest;
      res.json(await settings.update(currentUser(req), requestWorkspace(req), body));
    },
  });

  return { parts, versions, settings, imports } satisfies PartsModule;
}
