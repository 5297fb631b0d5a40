import { RE2JS } from 're2js';

/**
 * JSON Schema `pattern`s of stored templates run on RE2 (the pure-JavaScript `re2js`): time grows
 * linearly with the input whatever the pattern, so no template can stall the event loop. ECMAScript
 * syntax is translated to RE2's (`\u` escapes, named groups, control escapes); what RE2 cannot run
 * in linear time (lookaround, backreferences) does not compile.
 */

/** Characters one `test()` may read outside a `withPatternBudget` scope. */
export const DEFAULT_PATTERN_CHARS = 1_000_000;

/** Thrown when the pattern tests of a scope have read their budget of characters. */
export class PatternBudgetError extends Error {
  constructor() {
    super('the input is too long to check against the pattern');
  }
}

/** Characters left to the pattern tests of a scope. */
export interface PatternBudget {
  left: number;
}

let scope: PatternBudget | null = null;

/** Runs `work` with one budget of characters shared by every pattern test inside it. */
export function withPatternBudget<T>(budget: number | PatternBudget, work: () => T): T {
  const outer = scope;
  scope = typeof budget === 'number' ? { left: budget } : budget;
  try {
    return work();
  } finally {
    scope = outer;
  }
}

/** An unescaped `\k<`: a named backreference, which translateRegExp would turn into the letter k. */
const NAMED_BACKREFERENCE = /(?:^|[^\\])(?:\\\\)*\\k</;

/** Compiles an ECMAScript pattern for RE2; throws when RE2 cannot run it. */
export function compileLinear(source: string): RE2JS {
  if (NAMED_BACKREFERENCE.test(source)) throw new SyntaxError('backreferences are not supported');
  return RE2JS.compile(RE2JS.translateRegExp(source));
}

/** The RegExp-like object ajv calls `test()` on (unanchored, as RegExp.prototype.test). */
class Re2Pattern {
  readonly flags = 'u';

  constructor(
    readonly source: string,
    private readonly re: RE2JS,
  ) {}

  test(input: string): boolean {
    const meter = scope ?? { left: DEFAULT_PATTERN_CHARS };
    meter.left -= Math.max(1, input.length);
    if (meter.left < 0) throw new PatternBudgetError();
    return this.re.matcher(input).find();
  }

  toString(): string {
    return `/${this.source}/u`;
  }
}

/** ajv's `code.regExp` engine: every `pattern` and `patternProperties` key is compiled by it. */
export const linearRegExpEngine = Object.assign(
  (source: string) => new Re2Pattern(source, compileLinear(source)),
  {
    code: 'linearRegExp',
  },
);
