/**
 * At most `size` jobs at once, handed out round-robin among owners (tenants): an owner with thirty
 * files waiting gets one turn in each round like an owner with one, so one tenant's batch does not
 * keep another's single upload waiting behind it (within what the consumer has taken from the queue).
 */
export class FairSlots {
  private running = 0;
  /** Owners with waiting jobs, in turn order; each with its waiters, oldest first. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly size: number) {}

  /** Runs `work` once a slot is free and it is `owner`'s turn. */
  async run<T>(owner: string, work: () => Promise<T>): Promise<T> {
    if (this.running >= this.size || this.waiting.size > 0) {
      await new Promise<void>((resolve) => {
        const queue = this.waiting.get(owner);
        if (queue) queue.push(resolve);
        else this.waiting.set(owner, [resolve]);
      });
    } else {
      this.running++;
    }
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  /** Jobs waiting for a slot. */
  get queued(): number {
    let n = 0;
    for (const queue of this.waiting.values()) n += queue.length;
    return n;
  }

  private release(): void {
    // The next owner in turn gets the slot; it goes to the back of the turn order.
    const next = this.waiting.entries().next();
    if (next.done) {
      this.running--;
      return;
    }
    const [owner, queue] = next.value;
    const resolve = queue.shift() as () => void;
    this.waiting.delete(owner);
    if (queue.length > 0) this.waiting.set(owner, queue);
    resolve();
  }
}
