import { converted, refused } from '../test-support/refused';
import { UploadUrlRequest } from './file-uploads.dto';
import { FilePermissions, ListFilesQuery, MAX_PERMISSION_IDS, UploadFileForm } from './files.dto';

const ID = '01900000-0000-7000-8000-000000000000';

describe('upload form fields (multipart: every value a string)', () => {
  test.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('public=%s is read as %s', (text, value) => {
    expect(refused(UploadFileForm, { public: text, replace_if_exists: text })).toEqual([]);
    expect(converted(UploadFileForm, { public: text })).toMatchObject({ public: value });
  });

  test.each(['yes', 'TRUE', '', 'on'])('public=%j is refused, not read as false', (text) => {
    expect(refused(UploadFileForm, { public: text })).toEqual(['public']);
    expect(refused(UploadFileForm, { replace_if_exists: text })).toEqual(['replace_if_exists']);
  });

  test.each([
    ['a, b ,c', ['a', 'b', 'c']],
    ['["a","b, c"]', ['a', 'b, c']],
    ['single', ['single']],
    ['', []],
    [
      ['a', 'b'],
      ['a', 'b'],
    ],
  ])('tags %j are read as %j', (tags, list) => {
    expect(refused(UploadFileForm, { tags })).toEqual([]);
    expect(converted(UploadFileForm, { tags }).tags).toEqual(list);
  });

  test('tags: broken JSON, non-strings, too many or too long are refused', () => {
    expect(refused(UploadFileForm, { tags: '["a",' })).toEqual(['tags']);
    expect(refused(UploadFileForm, { tags: '[1,2]' })).toEqual(['tags']);
    expect(refused(UploadFileForm, { tags: Array(51).fill('t').join(',') })).toEqual(['tags']);
    expect(refused(UploadFileForm, { tags: Array(50).fill('t').join(',') })).toEqual([]);
    expect(refused(UploadFileForm, { tags: 'x'.repeat(101) })).toEqual(['tags']);
  });

  test('a list filter reads tags the same way, at most 20', () => {
    expect(converted(ListFilesQuery, { tags: 'a,b' }, 'query').tags).toEqual(['a', 'b']);
    expect(refused(ListFilesQuery, { tags: Array(21).fill('t').join(',') }, 'query')).toEqual(['tags']);
    expect(refused(ListFilesQuery, { folder_path: `/${'d'.repeat(1024)}` }, 'query')).toEqual([
      'folder_path',
    ]);
  });
});

describe('file requests', () => {
  test('permissions: lists of ids, each a UUID, at most MAX_PERMISSION_IDS', () => {
    expect(refused(FilePermissions, { view: [ID], edit: [], delete: [] })).toEqual([]);
    expect(refused(FilePermissions, { view: ['alice'], edit: [], delete: [] })).toEqual(['view']);
    expect(
      refused(FilePermissions, { view: [], edit: Array(MAX_PERMISSION_IDS + 1).fill(ID), delete: [] }),
    ).toEqual(['edit']);
    expect(refused(FilePermissions, { view: [], edit: [] })).toEqual(['delete']);
  });

  test.each([
    ['model/step', true],
    ['application/vnd.ms-excel', true],
    ['image/svg+xml', true],
    ['model', false],
    ['model/step; charset=x', false],
    ['model/step/extra', false],
  ])('a pre-signed upload mime_type %s valid: %s', (mime, valid) => {
    expect(refused(UploadUrlRequest, { name: 'a.step', size: 1, mime_type: mime })).toEqual(
      valid ? [] : ['mime_type'],
    );
  });

  test('a pre-signed upload has at least one byte, counted as a whole number', () => {
    expect(refused(UploadUrlRequest, { name: 'a.step', size: 0 })).toEqual(['size']);
    expect(refused(UploadUrlRequest, { name: 'a.step', size: 1.5 })).toEqual(['size']);
    expect(refused(UploadUrlRequest, { name: 'a.step', size: 5e9 })).toEqual([]);
  });
});
