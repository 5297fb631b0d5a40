import { KeyLanes } from './key-lanes';

describe('KeyLanes', () => {
  it('lets one holder per key in at a time, in arrival order, and refuses past maxWaiting', async () => {
    const lanes = new KeyLanes(2);
    const order: string[] = [];
    const first = await lanes.enter('k');
    const waiting = ['a', 'b'].map((name) =>
      lanes.enter('k').then((leave) => {
        order.push(name);
        return leave;
      }),
    );
    expect(await lanes.enter('k')).toBeNull(); // the holder and two waiting: full
    const other = await lanes.enter('other'); // another key does not wait
    expect(other).not.toBeNull();
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);

    first?.();
    const a = await waiting[0];
    expect(order).toEqual(['a']);
    a?.();
    a?.(); // leaving twice lets only one in
    const b = await waiting[1];
    expect(order).toEqual(['a', 'b']);
    b?.();
    other?.();
    expect(lanes.size).toBe(0);
  });
});
