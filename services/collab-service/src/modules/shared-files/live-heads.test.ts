import { LiveHeads } from './live-heads';

/** A read of the database that counts its calls and answers `value`. */
function reader(value: string | null) {
  const calls = { count: 0 };
  return {
    calls,
    read: async () => {
      calls.count++;
      return value;
    },
  };
}

describe('LiveHeads', () => {
  it('reads a head once and keeps it until the workspace changes', async () => {
    const heads = new LiveHeads<string>();
    const v1 = reader('v1');
    expect(await heads.get('w1', 'ann/a.step', v1.read)).toBe('v1');
    expect(await heads.get('w1', 'ann/a.step', v1.read)).toBe('v1');
    expect(v1.calls.count).toBe(1);
    heads.changed('w2'); // another workspace: nothing to forget here
    expect(await heads.get('w1', 'ann/a.step', v1.read)).toBe('v1');
    expect(v1.calls.count).toBe(1);
    heads.changed('w1');
    const v2 = reader('v2');
    expect(await heads.get('w1', 'ann/a.step', v2.read)).toBe('v2');
    expect(v2.calls.count).toBe(1);
  });

  it('keeps no miss, and nothing past its time to live', async () => {
    const heads = new LiveHeads<string>(30);
    const none = reader(null);
    await heads.get('w', 'k', none.read);
    await heads.get('w', 'k', none.read);
    expect(none.calls.count).toBe(2);
    const v = reader('v');
    await heads.get('w', 'k', v.read);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await heads.get('w', 'k', v.read);
    expect(v.calls.count).toBe(2);
  });

  it('does not keep a read that a change overtook', async () => {
    const heads = new LiveHeads<string>();
    let finish: (value: string) => void = () => {};
    const slow = heads.get('w', 'k', () => new Promise<string>((resolve) => (finish = resolve)));
    heads.changed('w'); // the write committed while the read was on its way
    finish('old');
    expect(await slow).toBe('old'); // answered to its caller, but not kept
    const fresh = reader('new');
    expect(await heads.get('w', 'k', fresh.read)).toBe('new');
    expect(fresh.calls.count).toBe(1);
  });

  it('forgets the workspaces used longest ago beyond its bound', async () => {
    const heads = new LiveHeads<string>(60_000, 2);
    const counted = reader('v');
    for (const w of ['a', 'b', 'c']) await heads.get(w, 'k', counted.read);
    expect(counted.calls.count).toBe(3);
    await heads.get('c', 'k', counted.read);
    await heads.get('b', 'k', counted.read);
    expect(counted.calls.count).toBe(3); // b and c kept
    await heads.get('a', 'k', counted.read);
    expect(counted.calls.count).toBe(4); // a was forgotten
  });
});
