import { refused } from '../test-support/refused';
import { decimalPlaces, IsFiniteDecimal } from './decimals';

class Amount {
  @IsFiniteDecimal(6)
  value: number;
}

describe('decimal places of a JSON number', () => {
  test.each([
    [0, 0],
    [12, 0],
    [1e21, 0], // String(1e21) is '1e+21'
    [0.5, 1],
    [123.456, 3],
    [0.000001, 6],
    [1e-7, 7], // String(1e-7) is '1e-7': no '.' at all
    [1.5e-7, 8],
    [-2.25, 2],
  ])('%s has %s', (value, places) => {
    expect(decimalPlaces(value)).toBe(places);
  });

  test.each([
    [12.345678, true],
    [1e21, true],
    [1.2345678, false],
    [1e-7, false], // class-validator's maxDecimalPlaces throws here
    [1.5e-7, false], // ... and counts one place here
    [Number.NaN, false],
    [Number.NEGATIVE_INFINITY, false],
    ['1.5', false],
  ])('%s valid: %s', (value, valid) => {
    expect(refused(Amount, { value })).toEqual(valid ? [] : ['value']);
  });
});
