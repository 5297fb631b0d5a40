import { declared, snake } from '../test-support/declared';
import { refused } from '../test-support/refused';
import { BOM_SNAKE_CASE_FIELDS, MAX_BOM_ITEMS } from './bom-constants';
import { ValidateEffectivityRequest } from './bom-effectivity.dto';
import { CreateBomRequest } from './bom-header.dto';
import { AlternateInput, BomItemInput, SetAlternatesRequest, UpsertBomItemsRequest } from './bom-lines.dto';

const PART = '01900000-0000-7000-8000-000000000001';
const line = (fields: Record<string, unknown>) => ({ childPartId: PART, qty: 1, ...fields });

describe('BOM line changes', () => {
  test.each([
    [1, true],
    [0.000001, true],
    [2.5, true],
    [1e12, true],
    [0, false], // a quantity per parent is more than nothing
    [-1, false],
    [1.0000001, false], // more than 6 decimal places
    [1e-7, false], // in exponent form: refused, not a crash
    [1.5e-7, false],
    [1e12 + 1, false],
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
    ['2', false], // a JSON number, not a string
  ])('qty %s valid: %s', (qty, valid) => {
    expect(refused(BomItemInput, line({ qty }))).toEqual(valid ? [] : ['qty']);
  });

  test('a line may leave qty out (an update of other fields); uom is never empty', () => {
    expect(refused(BomItemInput, { id: PART, notes: 'moved' })).toEqual([]);
    expect(refused(BomItemInput, line({ uom: 'mm' }))).toEqual([]);
    expect(refused(BomItemInput, line({ uom: '' }))).toEqual(['uom']);
    expect(refused(BomItemInput, line({ uom: 'x'.repeat(17) }))).toEqual(['uom']);
  });

  test('sortIndex is a whole number from 0 to 1e9; _op is upsert or delete', () => {
    expect(refused(BomItemInput, line({ sortIndex: 0, _op: 'upsert' }))).toEqual([]);
    expect(refused(BomItemInput, line({ sortIndex: 1_000_000_000 }))).toEqual([]);
    expect(refused(BomItemInput, line({ sortIndex: -1 }))).toEqual(['sortIndex']);
    expect(refused(BomItemInput, line({ sortIndex: 1.5 }))).toEqual(['sortIndex']);
    expect(refused(BomItemInput, line({ sortIndex: 1_000_000_001 }))).toEqual(['sortIndex']);
    expect(refused(BomItemInput, { id: PART, _op: 'delete' })).toEqual([]);
    expect(refused(BomItemInput, { id: PART, _op: 'remove' })).toEqual(['_op']);
  });

  test('parts and lines are named by UUID; a parent line may be null (the top level)', () => {
    expect(refused(BomItemInput, line({ parentItemId: null, childVersionId: null }))).toEqual([]);
    expect(refused(BomItemInput, line({ childPartId: 'BRK-100' }))).toEqual(['childPartId']);
    expect(refused(BomItemInput, line({ parentItemId: 'top' }))).toEqual(['parentItemId']);
    expect(refused(BomItemInput, { childPartNumber: 'BRK-100', qty: 2 })).toEqual([]);
  });

  test('reference designators: a string or a list (expanded and checked by the service)', () => {
    expect(refused(BomItemInput, line({ refdes: 'R1, R3-R5' }))).toEqual([]);
    expect(refused(BomItemInput, line({ refdes: ['R1', 'R2'] }))).toEqual([]);
  });

  test('alternates: each checked, at most 50', () => {
    const alt = { partId: PART, approval: 'conditional', rationale: 'second source' };
    expect(refused(BomItemInput, line({ alternates: [alt] }))).toEqual([]);
    expect(refused(BomItemInput, line({ alternates: [alt, { ...alt, approval: 'maybe' }] }))).toEqual([
      'alternates.1.approval',
    ]);
    expect(refused(BomItemInput, line({ alternates: Array(51).fill(alt) }))).toEqual(['alternates']);
    expect(refused(SetAlternatesRequest, { alternates: [{ approval: 'approved' }] })).toEqual([
      'alternates.0.partId',
    ]);
    expect(refused(AlternateInput, { ...alt, rationale: 'x'.repeat(2001) })).toEqual(['rationale']);
  });

  test('one change holds at most MAX_BOM_ITEMS lines, each checked where it sits', () => {
    expect(refused(UpsertBomItemsRequest, { items: [line({}), line({ qty: 0 })] })).toEqual(['items.1.qty']);
    expect(refused(UpsertBomItemsRequest, { items: [line({ dateFrom: '2026-13' })] })).toEqual([
      'items.0.dateFrom',
    ]);
    expect(refused(UpsertBomItemsRequest, { items: [line({ colour: 'red' })] })).toEqual(['items.0.colour']);
    expect(refused(UpsertBomItemsRequest, { items: Array(MAX_BOM_ITEMS).fill({ id: PART }) })).toEqual([]);
    expect(refused(UpsertBomItemsRequest, { items: Array(MAX_BOM_ITEMS + 1).fill({ id: PART }) })).toEqual([
      'items',
    ]);
    expect(refused(UpsertBomItemsRequest, { items: line({}) })).toEqual(['items']);
  });

  test('every snake_case alias is the spelling of a field a BOM request declares', () => {
    const fields = new Set(
      [CreateBomRequest, BomItemInput, AlternateInput, ValidateEffectivityRequest].flatMap((dto) => [
        ...declared(dto),
      ]),
    );
    for (const [alias, field] of Object.entries(BOM_SNAKE_CASE_FIELDS)) {
      expect([alias, fields.has(field)]).toEqual([alias, true]);
      expect(alias).toBe(snake(field));
    }
  });
});
