import { refused } from '../test-support/refused';
import { BranchRequest } from './file-branches.dto';
import { TimelineQuery } from './file-history.dto';
import { LockAllRequest, LockRequest } from './file-locks.dto';
import { FileQuery, LOCK_TTL_MAX_MS, LOCK_TTL_MIN_MS, SIGNED_URL_MAX_TTL_MS } from './shared-files.dto';
import { SignedServeQuery, SignedUrlQuery } from './signed-urls.dto';

const file = { workspace: 'w', username: 'ada', filename: 'bracket.step' };

describe('shared file requests', () => {
  test.each([
    ['main', true],
    ['fix_7-b', true],
    ['b'.repeat(64), true],
    ['b'.repeat(65), false],
    ['', false],
    ['Feature', false],
    ['feature/x', false],
    ['feat.1', false],
    ['..', false],
  ])('branch %j valid: %s', (branch, valid) => {
    expect(refused(FileQuery, { ...file, branch }, 'query')).toEqual(valid ? [] : ['branch']);
    expect(refused(BranchRequest, { workspace: 'w', username: 'ada', base: 'bracket.step', branch })).toEqual(
      valid ? [] : ['branch'],
    );
  });

  test.each([
    ['version', true],
    ['version,comment,task', true],
    ['task,version', true],
    ['version,', false],
    [',version', false],
    ['version, comment', false],
    ['versions', false],
    ['lock', false],
  ])('timeline types %j valid: %s', (types, valid) => {
    expect(refused(TimelineQuery, { path: 'w/ada/a.step', types }, 'query')).toEqual(valid ? [] : ['types']);
  });

  test('a lock lasts from a minute to a day', () => {
    const lock = (ttlMs: unknown) => refused(LockRequest, { path: 'w/ada/a.step', ttlMs });
    expect(lock(LOCK_TTL_MIN_MS)).toEqual([]);
    expect(lock(LOCK_TTL_MAX_MS)).toEqual([]);
    expect(lock(LOCK_TTL_MIN_MS - 1)).toEqual(['ttlMs']);
    expect(lock(LOCK_TTL_MAX_MS + 1)).toEqual(['ttlMs']);
    expect(lock(90_000.5)).toEqual(['ttlMs']);
    expect(refused(LockAllRequest, { workspace: 'w', ttlMs: LOCK_TTL_MIN_MS - 1 })).toEqual(['ttlMs']);
  });

  test('a signed URL lives from a second to seven days; its expiry is epoch milliseconds', () => {
    const path = '/v1/serve/w/ada/a.step';
    expect(refused(SignedUrlQuery, { path, ttlMs: String(SIGNED_URL_MAX_TTL_MS) }, 'query')).toEqual([]);
    expect(refused(SignedUrlQuery, { path, ttlMs: String(SIGNED_URL_MAX_TTL_MS + 1) }, 'query')).toEqual([
      'ttlMs',
    ]);
    expect(refused(SignedUrlQuery, { path, ttlMs: '999' }, 'query')).toEqual(['ttlMs']);
    expect(refused(SignedServeQuery, { expires: '1764324000000', sig: 'abc' }, 'query')).toEqual([]);
    expect(refused(SignedServeQuery, { expires: '1764324000000.5', sig: 'abc' }, 'query')).toEqual([
      'expires',
    ]);
    expect(refused(SignedServeQuery, { expires: '1e12', sig: 'abc' }, 'query')).toEqual(['expires']);
    expect(refused(SignedServeQuery, { expires: '9'.repeat(16), sig: 'abc' }, 'query')).toEqual(['expires']);
  });

  test('a file name is 1 to 1024 characters', () => {
    expect(refused(FileQuery, { ...file, filename: 'f'.repeat(1024) }, 'query')).toEqual([]);
    expect(refused(FileQuery, { ...file, filename: 'f'.repeat(1025) }, 'query')).toEqual(['filename']);
    expect(refused(FileQuery, { ...file, filename: '' }, 'query')).toEqual(['filename']);
  });
});
