import { IsNumber, ValidateBy } from 'class-validator';

/** Digits after the decimal point of a finite number, in exponent form too: `1e-7` has 7, `1.5e-7` has 8. */
export function decimalPlaces(value: number): number {
  const [mantissa, exponent = '0'] = String(value).split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}

/**
 * A finite JSON number with at most `places` decimal places. class-validator's own `maxDecimalPlaces`
 * counts the digits after a `.` in `String(value)`: it throws on `1e-7` (a 500 instead of a 400) and
 * finds one place in `1.5e-7`.
 */
export function IsFiniteDecimal(places: number): PropertyDecorator {
  return (target, key) => {
    IsNumber({ allowNaN: false, allowInfinity: false })(target, key);
    ValidateBy({
      name: 'maxDecimalPlaces',
      constraints: [places],
      validator: {
        validate: (value: unknown) =>
          typeof value !== 'number' || !Number.isFinite(value) || decimalPlaces(value) <= places,
        defaultMessage: (args) => `${args?.property} must have at most ${places} decimal places`,
      },
    })(target, key);
  };
}
