import { parseBoolean, parseDecimal, parseJsonObject, splitTags } from './cell-values';

describe('splitTags', () => {
  it('splits on commas and pipes, trims, drops empty and duplicate tags', () => {
    expect(splitTags(' steel, fastener|M3 ||steel , ')).toEqual(['steel', 'fastener', 'M3']);
  });

  it('keeps tags that differ in case', () => {
    expect(splitTags('RoHS,rohs')).toEqual(['RoHS', 'rohs']);
  });

  it('gives no tags for a blank cell', () => {
    expect(splitTags('  ')).toEqual([]);
  });
});

describe('parseJsonObject', () => {
  it('parses a JSON object', () => {
    expect(parseJsonObject(' {"material":"PA66","tolerance":{"mm":0.1}} ')).toEqual({
      ok: true,
      value: { material: 'PA66', tolerance: { mm: 0.1 } },
    });
  });

  it('leaves a blank cell undefined', () => {
    expect(parseJsonObject('')).toEqual({ ok: true, value: undefined });
  });

  it.each([
    ['invalid JSON', '{material: PA66}', /not valid JSON/],
    ['an array', '["a"]', /must be a JSON object/],
    ['a string', '"PA66"', /must be a JSON object/],
    ['null', 'null', /must be a JSON object/],
    ['a __proto__ key', '{"a":{"__proto__":{"admin":true}}}', /__proto__/],
    ['too deep nesting', `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`, /nest at most 32/],
    ['more than 64 KB', `{"a":"${'x'.repeat(70_000)}"}`, /at most 64 KB/],
  ])('refuses %s', (_, text, message) => {
    const result = parseJsonObject(text);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.message).toMatch(message);
  });
});

describe('parseBoolean', () => {
  it.each(['true', 'TRUE', 'yes', 'Y', '1', ' y '])('reads %j as true', (text) => {
    expect(parseBoolean(text)).toEqual({ ok: true, value: true });
  });

  it.each(['false', 'No', 'n', '0'])('reads %j as false', (text) => {
    expect(parseBoolean(text)).toEqual({ ok: true, value: false });
  });

  it('leaves a blank cell undefined and refuses other words', () => {
    expect(parseBoolean(' ')).toEqual({ ok: true, value: undefined });
    expect(parseBoolean('maybe')).toEqual({
      ok: false,
      message: 'Expected true or false (also yes/no, y/n, 1/0)',
    });
  });
});

describe('parseDecimal', () => {
  it.each([
    ['12.5', '12.5'],
    [' +012.50 ', '12.50'],
    ['.5', '0.5'],
    ['5.', '5'],
    ['-0.75', '-0.75'],
    ['-0', '0'],
    ['1.2e3', '1200'],
    ['1E-7', '0.0000001'],
    ['123456789012345678901234.5', '123456789012345678901234.5'],
  ])('reads %j as %j, exactly', (text, value) => {
    expect(parseDecimal(text)).toEqual({ ok: true, value });
  });

  it('refuses a decimal comma and thousands separators rather than guess', () => {
    for (const text of ['1,5', '1,500', '1,234.50']) {
      expect(parseDecimal(text)).toEqual({
        ok: false,
        message:
          'Use a dot as the decimal separator and no thousands separators (1234.5), or send decimal=comma',
      });
    }
  });

  it('reads a decimal comma when the file says so, and then refuses a dot', () => {
    expect(parseDecimal('1,5', 'comma')).toEqual({ ok: true, value: '1.5' });
    expect(parseDecimal('1.5', 'comma').ok).toBe(false);
  });

  it.each(['$1.50', '1 000', 'abc', '.', 'e5', '1e', 'NaN', 'Infinity', '1e999'])('refuses %j', (text) => {
    expect(parseDecimal(text).ok).toBe(false);
  });

  it('leaves a blank cell undefined', () => {
    expect(parseDecimal('')).toEqual({ ok: true, value: undefined });
  });
});
