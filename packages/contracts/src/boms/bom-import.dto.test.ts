import { refused } from '../test-support/refused';
import { CreateBomRequest, ListBomsQuery } from './bom-header.dto';
import { ImportBomForm } from './bom-import.dto';
import { WhereUsedQuery } from './bom-where-used.dto';

const BOM = '01900000-0000-7000-8000-000000000002';

describe('BOM header, import and where-used requests', () => {
  test('import form fields are strings: dryRun true or false, decimal dot or comma', () => {
    expect(refused(ImportBomForm, { bomId: BOM, dryRun: 'true', decimal: 'comma' })).toEqual([]);
    expect(refused(ImportBomForm, { bomId: BOM, dryRun: true })).toEqual(['dryRun']);
    expect(refused(ImportBomForm, { bomId: BOM, dryRun: 'yes' })).toEqual(['dryRun']);
    expect(refused(ImportBomForm, { bomId: BOM, decimal: ',' })).toEqual(['decimal']);
    expect(refused(ImportBomForm, { dryRun: 'true' })).toEqual(['bomId']);
  });

  test('a BOM is engineering or manufacturing, with a revision of 1 to 32 characters', () => {
    const bom = { workspace: 'w', assemblyPartId: BOM, type: 'engineering', revision: 'A' };
    expect(refused(CreateBomRequest, bom)).toEqual([]);
    expect(refused(CreateBomRequest, { ...bom, type: 'ebom' })).toEqual(['type']);
    expect(refused(CreateBomRequest, { ...bom, revision: '' })).toEqual(['revision']);
    expect(refused(CreateBomRequest, { ...bom, revision: 'R'.repeat(33) })).toEqual(['revision']);
    expect(refused(CreateBomRequest, { ...bom, assemblyVersionId: null })).toEqual([]);
  });

  test('list and where-used filters take their listed values only', () => {
    expect(
      refused(ListBomsQuery, { workspace: 'w', status: 'in_review', type: 'manufacturing' }, 'query'),
    ).toEqual([]);
    expect(refused(ListBomsQuery, { workspace: 'w', status: 'released' }, 'query')).toEqual(['status']);
    expect(refused(WhereUsedQuery, { levels: 'all' }, 'query')).toEqual([]);
    expect(refused(WhereUsedQuery, { levels: '2' }, 'query')).toEqual(['levels']);
  });
});
