import { refused } from '../test-support/refused';
import { ModelLookupQuery, TranslateFileRequest } from './viewer.dto';

describe('viewer requests', () => {
  test.each([
    ['bracket.step', true],
    ['ada/bracket.step', true],
    ['ada/bracket v2 (final).step', true],
    ['ada/sub/bracket.step', false], // one folder level: the user's
    ['/bracket.step', false],
    ['ada/', false],
    ['', false],
    ['ada/bra\0cket.step', false],
    [`${'f'.repeat(256)}`, false],
  ])('filename %j valid: %s', (filename, valid) => {
    expect(refused(TranslateFileRequest, { workspace: 'w', filename })).toEqual(valid ? [] : ['filename']);
    expect(refused(ModelLookupQuery, { workspace: 'w', filename }, 'query')).toEqual(
      valid ? [] : ['filename'],
    );
  });

  test.each([
    [0.01, true],
    [0.5, true],
    [0.99, true],
    [0, false],
    [1, false],
    [0.001, false],
  ])('simplify %s valid: %s', (simplify, valid) => {
    expect(refused(TranslateFileRequest, { workspace: 'w', filename: 'a.step', simplify })).toEqual(
      valid ? [] : ['simplify'],
    );
  });

  test('a model lookup reads ttlMs from the query, a whole number of at least a second', () => {
    expect(
      refused(ModelLookupQuery, { workspace: 'w', filename: 'a.step', ttlMs: '60000' }, 'query'),
    ).toEqual([]);
    expect(refused(ModelLookupQuery, { workspace: 'w', filename: 'a.step', ttlMs: '999' }, 'query')).toEqual([
      'ttlMs',
    ]);
    expect(refused(ModelLookupQuery, { workspace: 'w', filename: 'a.step', ttlMs: 'soon' }, 'query')).toEqual(
      ['ttlMs'],
    );
  });
});
