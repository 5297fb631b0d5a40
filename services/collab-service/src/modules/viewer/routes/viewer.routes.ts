import {
  ErrorBodyDto,
  ModelLookup,
  ModelLookupQuery,
  SignedServeQuery,
  StatusMapQuery,
  TranslateFileRequest,
  Translation,
} from '@hwp/contracts';
import { binaryResponse, type RawQuery } from '@hwp/platform';
import type { RequestHandler } from 'express';
import { fromBody, fromQuery } from '../../workspace-access/workspace-access';
import { type CollabRoute, memberRoute, openRoute } from '../../workspace-access/workspace-route';
import type { TranslationsService } from '../translations.service';

const TAGS = ['viewer'];
const NOT_FOUND = { description: 'No such file (or branch) in the workspace', schema: ErrorBodyDto };

export const translateFile = (translations: TranslationsService) =>
  memberRoute<TranslateFileRequest, RawQuery>({
    method: 'post',
    path: '/api/viewer/translate-file',
    summary: 'Queue the translation of a file’s current version into a GLB for the web viewer',
    description:
      '`filename` is `<username>/<filename>`; `branch` names a branch’s head (with branch suffix files the ' +
      '`@branch` file is meant). One job per file version and options: asking again answers the same job (200). ' +
      'Progress comes as SSE `translation` events. STL, OBJ, glTF/GLB, STEP and IGES. Bounded: at most 8 ' +
      'option sets per file version (a new one past it: 409) and TRANSLATION_QUEUE_PER_USER (4) of a user’s ' +
      'jobs pending or running (429 with Retry-After).',
    tags: TAGS,
    role: 'viewer',
    workspace: fromBody('workspace'),
    body: TranslateFileRequest,
    status: 202,
    responses: {
      202: { description: 'Queued', schema: Translation },
      200: { description: 'Already asked for: the job as it stands', schema: Translation },
      404: NOT_FOUND,
      409: {
        description: 'The version has 8 translations with other options already (ask for one of those)',
        schema: ErrorBodyDto,
      },
      413: { description: 'Larger than TRANSLATION_MAX_MB', schema: ErrorBodyDto },
      415: { description: 'Not a model format the viewer translates', schema: ErrorBodyDto },
      429: {
        description:
          'TRANSLATION_QUEUE_PER_USER of the caller’s translations wait or run already; retry after Retry-After',
        schema: ErrorBodyDto,
        headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
      },
    },
    handler: async ({ body, user, workspace, res }) => {
      const { translation, queued } = await translations.request(user, workspace, body);
      res.status(queued ? 202 : 200).json(translation);
      return res;
    },
  });

export const statusMap = (translations: TranslationsService) =>
  memberRoute<unknown, StatusMapQuery>({
    method: 'get',
    path: '/api/viewer/status-map',
    summary: 'Translation state of every file’s current version',
    description:
      'An array of `{ name, status, progress, reason?, modelId, versionId }`; a failed one carries its reason.',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: StatusMapQuery,
    responses: {
      200: {
        description: 'Status map',
        schema: { type: 'array', items: { $ref: '#/components/schemas/TranslationStatusEntry' } },
      },
    },
    handler: ({ workspace }) => translations.statusMap(workspace),
  });

export const lookupModel = (translations: TranslationsService) =>
  memberRoute<unknown, ModelLookupQuery>({
    method: 'get',
    path: '/api/viewer/models/lookup',
    summary: 'The translated model of a file’s current version: its id and a signed GLB URL',
    description: 'The URL is there once `status` is `success`. No translation of the current version: 404.',
    tags: TAGS,
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: ModelLookupQuery,
    responses: {
      200: { description: 'The model', schema: ModelLookup },
      404: { description: 'No such file, or no translation of its current version', schema: ErrorBodyDto },
    },
    handler: ({ query, user, workspace }) => translations.lookup(workspace, user, query),
  });

export function serveModel(translations: TranslationsService, cors: RequestHandler): CollabRoute[] {
  return (['get', 'head'] as const).map((method) =>
    openRoute<unknown, SignedServeQuery>({
      method,
      path: '/api/viewer/models/:id/glb',
      summary: 'A translated model’s GLB through its signed URL (no credentials; Range supported)',
      tags: TAGS,
      query: SignedServeQuery,
      cors,
      responses: {
        200: binaryResponse('The GLB', 'model/gltf-binary'),
        206: binaryResponse('A range of it', 'model/gltf-binary'),
        304: { description: 'Not modified' },
        403: { description: 'The signature does not match', schema: ErrorBodyDto },
        404: { description: 'No such model', schema: ErrorBodyDto },
        410: { description: 'Expired', schema: ErrorBodyDto },
        416: { description: 'Range not satisfiable', schema: ErrorBodyDto },
      },
      handler: async ({ params, query, req, res }) => {
        await translations.serveGlb(params.id, query, req, res);
        return res;
      },
    }),
  );
}
