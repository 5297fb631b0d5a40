import { newId } from './ids';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix milliseconds of a UUIDv7. */
const millisecondsOf = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('newId', () => {
  it('makes RFC 9562 version 7 ids carrying the current time', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(id).toMatch(UUID_V7);
    expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisecondsOf(id)).toBeLessThanOrEqual(after + 1);
  });

  it('keeps ids of one process strictly increasing, also many in one millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => newId());
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
  });

  it('stays increasing when the clock steps back', () => {
    const now = jest.spyOn(Date, 'now');
    try {
      const first = newId();
      now.mockReturnValue(millisecondsOf(first) - 5_000);
      const second = newId();
      expect(second > first).toBe(true);
    } finally {
      now.mockRestore();
    }
  });
});
