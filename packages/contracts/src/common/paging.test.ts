import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ListPartsQuery } from '../parts/part.dto';
import { converted, refused } from '../test-support/refused';
import { MAX_PAGE, MAX_PAGE_SIZE, PageQuery } from './paging';

describe('?page&pageSize of every list', () => {
  test('query strings are read as whole numbers', () => {
    expect(refused(PageQuery, { page: '2', pageSize: '50' }, 'query')).toEqual([]);
    expect(converted(PageQuery, { page: '2', pageSize: '50' }, 'query')).toEqual({ page: 2, pageSize: 50 });
    expect(refused(PageQuery, {}, 'query')).toEqual([]);
  });

  test.each([
    ['1', true],
    [String(MAX_PAGE), true],
    ['0', false],
    ['-1', false],
    ['1.5', false],
    ['1e3', true], // Number('1e3') is the whole number 1000
    [String(MAX_PAGE + 1), false], // its offset would overflow the statement
    ['abc', false],
    ['', false],
  ])('page %s valid: %s', (page, valid) => {
    expect(refused(PageQuery, { page }, 'query')).toEqual(valid ? [] : ['page']);
  });

  test.each([
    ['1', true],
    [String(MAX_PAGE_SIZE), true],
    ['0', false],
    [String(MAX_PAGE_SIZE + 1), false],
    ['50.5', false],
  ])('pageSize %s valid: %s', (pageSize, valid) => {
    expect(refused(PageQuery, { pageSize }, 'query')).toEqual(valid ? [] : ['pageSize']);
  });

  test('every broken rule says the same thing: the range of the field', () => {
    const messages = (input: Record<string, unknown>) =>
      validateSync(plainToInstance(PageQuery, input)).flatMap((e) => Object.values(e.constraints ?? {}));
    for (const page of [0, 1.5, MAX_PAGE + 1])
      expect(new Set(messages({ page }))).toEqual(
        new Set([`page must be a whole number from 1 to ${MAX_PAGE}`]),
      );
    expect(new Set(messages({ pageSize: 501 }))).toEqual(
      new Set(['pageSize must be a whole number from 1 to 500']),
    );
  });

  test('a list query inherits the limits', () => {
    expect(refused(ListPartsQuery, { workspace: 'w', page: '3', pageSize: '500' }, 'query')).toEqual([]);
    expect(refused(ListPartsQuery, { workspace: 'w', pageSize: '501' }, 'query')).toEqual(['pageSize']);
  });
});
