import { AppError } from '../errors';
import { toAppError } from './error-middleware';
import { toOpenApiPath } from './openapi';

describe('toAppError', () => {
  it.each([
    [{ type: 'entity.parse.failed' }, 400, 'validation_failed'],
    [{ type: 'entity.too.large' }, 413, 'payload_too_large'],
    [{ code: 'LIMIT_FILE_SIZE' }, 413, 'payload_too_large'],
    [{ code: '23505' }, 409, 'conflict'],
    [{ code: '23503' }, 409, 'conflict'],
    [{ code: '40001' }, 503, 'unavailable'],
    [{ code: 'ECONNREFUSED' }, 503, 'unavailable'],
    [{ code: '08006' }, 503, 'unavailable'],
    [new Error('timeout exceeded when trying to connect'), 503, 'unavailable'],
    [new Error('Multipart: Boundary not found'), 400, 'validation_failed'],
    [new Error('boom'), 500, 'internal'],
    ['a string', 500, 'internal'],
  ])('maps %p to %i %s', (thrown, status, code) => {
    const mapped = toAppError(thrown);
    expect(mapped.status).toBe(status);
    expect(mapped.code).toBe(code);
  });

  it('tells the client of a saturated pool when to come back', () => {
    expect(toAppError(new Error('timeout exceeded when trying to connect')).headers).toEqual({
      'Retry-After': '2',
    });
  });

  it('never leaks the message of an unknown error', () => {
    expect(toAppError(new Error('password=hunter2')).detail).toBe('Internal server error');
  });

  it('keeps an AppError as it is', () => {
    const error = new AppError('locked', 'held by ana');
    expect(toAppError(error)).toBe(error);
  });
});

describe('toOpenApiPath', () => {
  it('turns express parameters and wildcards into OpenAPI templates', () => {
    expect(toOpenApiPath('/files/:fileId/revisions/:revisionId')).toEqual({
      path: '/files/{fileId}/revisions/{revisionId}',
      params: ['fileId', 'revisionId'],
    });
    expect(toOpenApiPath('/blobs/*key')).toEqual({ path: '/blobs/{key}', params: ['key'] });
  });
});
