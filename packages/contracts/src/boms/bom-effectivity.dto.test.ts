import { refused } from '../test-support/refused';
import { Effectivity, ValidateEffectivityRequest } from './bom-effectivity.dto';

describe('BOM line effectivity', () => {
  test.each([
    ['2026-11-28', true],
    ['2026-1-5', false],
    ['2026-11-28T00:00:00Z', false], // a build date, not a time
    ['28.11.2026', false],
    ['20261128', false],
  ])('date %s valid: %s', (date, valid) => {
    expect(refused(Effectivity, { dateFrom: date })).toEqual(valid ? [] : ['dateFrom']);
    expect(refused(Effectivity, { dateTo: date })).toEqual(valid ? [] : ['dateTo']);
  });

  test('each range may be open at either end: absent or null', () => {
    expect(refused(Effectivity, {})).toEqual([]);
    expect(
      refused(Effectivity, {
        dateFrom: null,
        dateTo: null,
        serialFrom: null,
        serialTo: null,
        lotFrom: null,
        lotTo: null,
      }),
    ).toEqual([]);
    expect(refused(Effectivity, { dateFrom: '2026-01-01', serialTo: 999, lotFrom: 'L-7' })).toEqual([]);
  });

  test('serials are whole numbers from 0; lots are text up to 64 characters', () => {
    expect(refused(Effectivity, { serialFrom: 0 })).toEqual([]);
    expect(refused(Effectivity, { serialFrom: -1 })).toEqual(['serialFrom']);
    expect(refused(Effectivity, { serialTo: 10.5 })).toEqual(['serialTo']);
    expect(refused(Effectivity, { serialTo: '10' })).toEqual(['serialTo']);
    expect(refused(Effectivity, { lotFrom: 'x'.repeat(64) })).toEqual([]);
    expect(refused(Effectivity, { lotTo: 'x'.repeat(65) })).toEqual(['lotTo']);
    expect(refused(Effectivity, { lotTo: 7 })).toEqual(['lotTo']);
  });

  test('a check names the effectivity, checked field by field', () => {
    expect(refused(ValidateEffectivityRequest, { effectivity: { serialFrom: 1, serialTo: 5 } })).toEqual([]);
    expect(refused(ValidateEffectivityRequest, {})).toEqual(['effectivity']);
    expect(refused(ValidateEffectivityRequest, { effectivity: null })).toEqual(['effectivity']);
    expect(refused(ValidateEffectivityRequest, { effectivity: { dateTo: 'soon' } })).toEqual([
      'effectivity.dateTo',
    ]);
    expect(
      refused(ValidateEffectivityRequest, { effectivity: {}, refdes: 'R1-R4', parentItemId: null }),
    ).toEqual([]);
  });
});
