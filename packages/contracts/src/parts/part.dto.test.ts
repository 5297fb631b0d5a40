import { UpdateBomSettingsRequest } from '../boms/bom-settings.dto';
import { declared, snake } from '../test-support/declared';
import { refused } from '../test-support/refused';
import { CreatePartRequest, ListPartsQuery, UpdatePartRequest } from './part.dto';
import { PART_LIFECYCLE_MOVES, PART_LIFECYCLES, PART_SNAKE_CASE_FIELDS } from './part-constants';
import { CreatePartVersionRequest } from './part-version.dto';

const part = (fields: Record<string, unknown>) => ({ workspace: 'w', name: 'n', ...fields });

describe('part validators', () => {
  test.each([
    ['BRK-100', true],
    ['a', true],
    ['M4x10/DIN912#A2+', true],
    ['x'.repeat(64), true],
    ['-starts-with-dash', false],
    ['.hidden', false],
    ['has space', false],
    [' BRK-100', false],
    ['BRK-100 ', false],
    ['x'.repeat(65), false],
    ['ü-umlaut', false],
    ['BRK\\100', false],
  ])('part number %s valid: %s', (partNumber, valid) => {
    expect(refused(CreatePartRequest, part({ partNumber }))).toEqual(valid ? [] : ['partNumber']);
  });

  test('part attributes must be a JSON object; tags are bounded', () => {
    expect(refused(CreatePartRequest, part({ attributes: { pitch: 0.7 } }))).toEqual([]);
    expect(refused(CreatePartRequest, part({ attributes: 'pitch=0.7' }))).toEqual(['attributes']);
    expect(refused(CreatePartRequest, part({ attributes: [1, 2] }))).toEqual(['attributes']);
    expect(refused(CreatePartRequest, part({ tags: Array(100).fill('t') }))).toEqual([]);
    expect(refused(CreatePartRequest, part({ tags: Array(101).fill('t') }))).toEqual(['tags']);
    expect(refused(CreatePartRequest, part({ tags: [''] }))).toEqual(['tags']);
    expect(refused(CreatePartRequest, part({ tags: ['x'.repeat(65)] }))).toEqual(['tags']);
  });

  test.each([
    [0, true],
    [12.345678, true],
    [1e9, true],
    [-0.01, false],
    [1.2345678, false], // more than 6 decimal places
    [1e-7, false], // in exponent form: refused, not a crash
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
    ['12.5', false],
  ])('unit cost %s valid: %s', (unitCost, valid) => {
    expect(refused(UpdatePartRequest, { unitCost })).toEqual(valid ? [] : ['unitCost']);
  });

  test.each([
    ['EUR', true],
    ['USD', true],
    ['eur', false],
    ['EURO', false],
    ['€', false],
    ['E1R', false],
  ])('currency %s valid: %s', (currency, valid) => {
    expect(refused(UpdatePartRequest, { currency })).toEqual(valid ? [] : ['currency']);
  });

  test('list sorting and counting take their listed values only', () => {
    const list = (q: Record<string, unknown>) => refused(ListPartsQuery, { workspace: 'w', ...q }, 'query');
    expect(list({ sort: 'manufacturer_part_number', dir: 'desc', count: 'exact' })).toEqual([]);
    expect(list({ sort: 'partNumber' })).toEqual(['sort']);
    expect(list({ dir: 'DESC' })).toEqual(['dir']);
    expect(list({ count: 'estimate' })).toEqual(['count']);
  });

  test('every snake_case alias is the spelling of a field a part request declares', () => {
    const fields = new Set(
      [CreatePartRequest, UpdatePartRequest, CreatePartVersionRequest, UpdateBomSettingsRequest].flatMap(
        (dto) => [...declared(dto)],
      ),
    );
    for (const [alias, field] of Object.entries(PART_SNAKE_CASE_FIELDS)) {
      expect([alias, fields.has(field)]).toEqual([alias, true]);
      expect(alias).toBe(snake(field));
    }
  });

  test('lifecycle moves: between known lifecycles, never to itself, obsolete is final', () => {
    for (const from of PART_LIFECYCLES) {
      for (const to of PART_LIFECYCLE_MOVES[from]) expect(PART_LIFECYCLES).toContain(to);
      expect(PART_LIFECYCLE_MOVES[from]).not.toContain(from);
    }
    expect(PART_LIFECYCLE_MOVES.obsolete).toEqual([]);
    expect(PART_LIFECYCLE_MOVES.prototype).not.toContain('on_hold');
  });
});
