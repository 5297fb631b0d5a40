import { bearerToken } from './bearer';

describe('bearerToken', () => {
  const cases: [string | undefined, string | undefined][] = [
    [undefined, undefined],
    ['', undefined],
    ['Bearer abc.def-ghi_j', 'abc.def-ghi_j'],
    ['bearer x', 'x'],
    ['BEARER \t  tok', 'tok'],
    ['Bearer', undefined],
    ['Bearer ', undefined],
    ['Bearerabc', undefined],
    ['Bearer a b', undefined],
    ['Bearer a\tb', undefined],
    ['Bearer tok ', undefined],
    ['Basic dXNlcjpwdw==', undefined],
    ['Bearer a\u00a0b', undefined],
    ['Bearer\u00a0tok', 'tok'],
    ['Bearer \u3000tok', 'tok'],
    ['Bearer\u2028tok', 'tok'],
    ['Bearer \ufefftok', 'tok'],
    ['Bearer tok\u3000', undefined],
    ['Bearer a\u00e9b', 'a\u00e9b'],
    [' Bearer tok', undefined],
    ['Xearer tok', undefined],
  ];
  it.each(cases)('%j -> %j, as /^Bearer\\s+(\\S+)$/i', (header, token) => {
    expect(bearerToken(header)).toBe(token);
    expect(bearerToken(header)).toBe(/^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1]);
  });
});
