/**
 * One holder per key at a time, in arrival order, within this process: the others wait in the
 * key's lane. At most `maxWaiting` wait per key; past that `enter` answers null at once, so a flood
 * on one key costs a map entry, not a growing queue. Lanes are dropped when they empty.
 */
export class KeyLanes {
  private readonly lanes = new Map<string, { tail: Promise<void>; size: number }>();

  constructor(private readonly maxWaiting: number) {}

  /** Resolves to `leave` once every earlier holder of `key` has left; null when the lane is full. */
  async enter(key: string): Promise<(() => void) | null> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { tail: Promise.resolve(), size: 0 };
      this.lanes.set(key, lane);
    }
    // The holder plus maxWaiting behind it.
    if (lane.size > this.maxWaiting) return null;
    lane.size += 1;
    let open!: () => void;
    const mine = new Promise<void>((resolve) => {
      open = resolve;
    });
    const before = lane.tail;
    lane.tail = mine;
    await before;
    let left = false;
    const current = lane;
    return () => {
      if (left) return;
      left = true;
      current.size -= 1;
      if (current.size === 0 && this.lanes.get(key) === current) this.lanes.delete(key);
      open();
    };
  }

  /** Keys with a holder (for tests and metrics). */
  get size(): number {
    return this.lanes.size;
  }
}
