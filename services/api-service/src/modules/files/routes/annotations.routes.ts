import {
  Annotation,
  AnnotationList,
  CreateAnnotationRequest,
  CreateReplyRequest,
  ErrorBodyDto,
  PageQuery,
  UpdateAnnotationRequest,
} from '@hwp/contracts';
import type { AnnotationsService } from '../annotations.service';
import { type FileRouting, fileForbidden, fileNotFound } from './file-routing';

const tags = ['annotations'];
const notFound = { description: 'No such file or annotation the caller may see', schema: ErrorBodyDto };

export const createAnnotation = ({ fileRoute }: FileRouting, annotations: AnnotationsService) =>
  fileRoute({
    method: 'post',
    path: '/files/:file_id/annotations',
    summary: 'Annotate the file (on its current revision)',
    tags,
    body: CreateAnnotationRequest,
    status: 201,
    responses: { 201: { description: 'The annotation, status open', schema: Annotation }, 404: fileNotFound },
    handler: ({ body, params, user, tenant }) => {
      const userId = user.id;
      return annotations.create(tenant, userId, params.file_id, body);
    },
  });

export const listAnnotations = ({ fileRoute }: FileRouting, annotations: AnnotationsService) =>
  fileRoute({
    method: 'get',
    path: '/files/:file_id/annotations',
    summary: 'Annotations of the file with their replies, oldest first',
    tags,
    query: PageQuery,
    responses: { 200: { description: 'A page of annotations', schema: AnnotationList }, 404: fileNotFound },
    handler: ({ query, params, user, tenant }) => {
      const userId = user.id;
      return annotations.list(tenant, userId, params.file_id, query);
    },
  });

export const replyToAnnotation = ({ fileRoute }: FileRouting, annotations: AnnotationsService) =>
  fileRoute({
    method: 'post',
    path: '/files/:file_id/annotations/:annotation_id/replies',
    summary: 'Reply to an annotation',
    tags,
    body: CreateReplyRequest,
    status: 201,
    responses: { 201: { description: 'The annotation with the reply', schema: Annotation }, 404: notFound },
    handler: ({ body, params, user, tenant }) => {
      const userId = user.id;
      return annotations.reply(tenant, userId, params.file_id, params.annotation_id, body.text);
    },
  });

export const moveAnnotation = ({ fileRoute }: FileRouting, annotations: AnnotationsService) =>
  fileRoute({
    method: 'patch',
    path: '/files/:file_id/annotations/:annotation_id',
    summary: "Change an annotation's status: open <-> in-progress -> resolved -> open",
    tags,
    body: UpdateAnnotationRequest,
    responses: {
      200: { description: 'The annotation', schema: Annotation },
      403: fileForbidden,
      404: notFound,
      409: { description: 'Not an allowed move from the current status', schema: ErrorBodyDto },
    },
    handler: ({ body, params, user, tenant }) => {
      const userId = user.id;
      return annotations.move(tenant, userId, params.file_id, params.annotation_id, body.status);
    },
  });
