import Ajv from 'ajv';
import { checkAttributes } from '../part-rules';
import { compileLinear, linearRegExpEngine, PatternBudgetError, withPatternBudget } from './linear-regexp';
import { patternProblem, schemaPatternErrors } from './schema-patterns';

/** Patterns of the kind templates hold, answered on RE2 exactly as the runtime's RegExp (`u`) does. */
const CORPUS: [string, string[]][] = [
  ['^[A-Z]{2}-\\d{3}$', ['AB-123', 'AB-1234', 'ab-123', 'XAB-123', '']],
  ['\\d+', ['abc', 'a1', '', '١٢']],
  ['^(\\d+\\.)*\\d+$', ['1', '1.2.3', '1..2', '1.', '.1', '']],
  ['^([a-z]+-)*[a-z]+$', ['a-b-c', 'a--b', 'abc', '-a', 'a-']],
  ['colou?r', ['color', 'colour', 'colr', 'my colour!']],
  ['^(foo|bar|baz)+$', ['foobar', 'foobaz', 'fooba', '', 'barbarfoo']],
  ['^a{2,4}$', ['a', 'aa', 'aaaa', 'aaaaa']],
  ['^.$', ['x', '😀', 'xy', '']],
  ['\\bcat\\b', ['cat', 'a cat!', 'concat', 'cats', 'CAT']],
  ['^\\p{Lu}\\p{Ll}*$', ['Émile', 'émile', 'Ωmega', 'A']],
  ['^\\u{1F600}+$', ['😀😀', '😀x']],
  ['^[\\u0041-\\u005A]+$', ['ABC', 'abc']],
  ['^(?<year>\\d{4})-(?:0[1-9]|1[0-2])$', ['2024-01', '2024-13', '24-01']],
  ['a|^b|c$', ['xa', 'bx', 'xb', 'xc', 'cx']],
  ['^(a|ab)*c$', ['abac', 'aab', 'c', 'abab']],
  ['^\\x41\\cJ?\\t?$', ['A', 'A\n', 'A\t', 'B']],
  ['^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$', ['a@b.io', 'a b@c.io', 'a@b']],
];

describe('template patterns on RE2', () => {
  test.each(CORPUS)('%s answers like the runtime RegExp', (pattern, inputs) => {
    const linear = compileLinear(pattern);
    const native = new RegExp(pattern, 'u');
    for (const input of inputs)
      expect([input, linear.matcher(input).find()]).toEqual([input, native.test(input)]);
  });

  test('^(a+)+$ answers the attack of any length (it never backtracks)', () => {
    const validate = new Ajv({ strict: false, code: { regExp: linearRegExpEngine } }).compile({
      type: 'string',
      pattern: '^(a+)+$',
    });
    for (const length of [26, 40, 10_000]) expect(validate(`${'a'.repeat(length)}!`)).toBe(false);
    expect(validate('a'.repeat(10_000))).toBe(true);
  });

  test('an input over the budget of characters is refused, not read', () => {
    const pattern = linearRegExpEngine('^a+$');
    expect(() => withPatternBudget(1_000, () => pattern.test('a'.repeat(10_000)))).toThrow(
      PatternBudgetError,
    );
    expect(withPatternBudget(1_000, () => pattern.test('aaa'))).toBe(true);
  });

  test('lookaround and backreferences do not compile', () => {
    for (const pattern of ['(?=a)a', '(?<!a)b', '(a)\\1', '(?<n>a)\\k<n>']) {
      expect(() => compileLinear(pattern)).toThrow();
    }
  });

  test('ajv runs pattern and patternProperties on RE2', () => {
    const ajv = new Ajv({ allErrors: true, strict: false, code: { regExp: linearRegExpEngine } });
    const validate = ajv.compile({
      type: 'object',
      properties: { code: { type: 'string', pattern: '^(a+)+$' } },
      patternProperties: { '^n_': { type: 'number' } },
    });
    expect(validate({ code: `${'a'.repeat(30)}!`, n_x: 'no' })).toBe(false);
    expect(validate.errors?.map((e) => e.instancePath).sort()).toEqual(['/code', '/n_x']);
    expect(validate({ code: 'aaa', n_x: 1 })).toBe(true);
  });
});

describe('the write-time check', () => {
  test.each(['^(a+)+$', '(\\w|\\d)+$', '(a*)*b', '^(\\w+\\s?)*$', '^(([a-z])+.)+[A-Z]([a-z])+$'])(
    'refuses %s as catastrophic (exponential backtracking)',
    (pattern) => {
      expect(patternProblem(pattern)).toMatch(/backtrack catastrophically/);
    },
  );

  test.each([
    '^[A-Z]{2}-\\d{3}$',
    '^(\\d+\\.)*\\d+$',
    '^([a-z]+-)*[a-z]+$',
    '(foo|bar)+',
    '^(a|ab)*c$',
    '^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$',
    '^\\d{1,3}(\\.\\d{1,3}){3}$',
    '^#?([0-9a-fA-F]{3}){1,2}$',
  ])('accepts %s', (pattern) => {
    expect(patternProblem(pattern)).toBeNull();
  });

  test('names each bad pattern by its path, at any depth, including patternProperties keys', () => {
    const errors = schemaPatternErrors(
      {
        properties: {
          a: { pattern: '^(a+)+$' },
          pattern: { type: 'string', pattern: '^ok$' },
          b: { anyOf: [{ pattern: '[' }, { enum: [{ pattern: '^(a+)+$' }] }] },
        },
        patternProperties: { '^(x+)+y$': {}, 'fine.key': { pattern: '(?=x)' } },
      },
      'schema',
    );
    expect(errors.map((e) => e.field)).toEqual([
      'schema.properties.a.pattern',
      'schema.properties.b.anyOf[0].pattern',
      'schema.patternProperties["^(x+)+y$"]',
      'schema.patternProperties["fine.key"].pattern',
    ]);
    expect(errors[1].message).toMatch(/not a valid regular expression/);
    expect(errors[3].message).toMatch(/cannot run in linear time/);
  });
});

describe('templates stored before patterns were checked', () => {
  const templateWith = (pattern: string) => ({
    required: [],
    enforce: true,
    schema: { type: 'object', properties: { a: { type: 'string', pattern } } },
  });

  test('a pattern RE2 cannot run is an error on the part, not a crash', () => {
    expect(checkAttributes(templateWith('^(?=x)x$'), { a: 'x' }).errors).toEqual([
      { field: 'attributes', message: expect.stringMatching(/cannot be applied/) },
    ]);
  });

  test('an attribute over the budget is an error; a shared budget bounds a whole import', () => {
    const template = templateWith('^(a+)+$');
    expect(checkAttributes(template, { a: 'a'.repeat(300_000) }).errors).toEqual([
      { field: 'attributes', message: expect.stringMatching(/too long/) },
    ]);
    const shared = { left: 2_000 };
    expect(checkAttributes(template, { a: 'aaa' }, shared).errors).toEqual([]);
    expect(shared.left).toBeLessThan(2_000);
    expect(checkAttributes(template, { a: 'a'.repeat(5_000) }, shared).errors).toHaveLength(1);
    expect(shared.left).toBe(0);
    expect(checkAttributes(template, { a: 'aaa' }, shared).errors).toHaveLength(1);
  });
});
