import { close, type Stats } from 'node:fs';

/** An open object: its descriptor and the stats read when it was opened. */
export interface OpenFile {
  fd: number;
  stats: Stats;
}

interface Entry extends OpenFile {
  /** Streams reading through the descriptor now. */
  readers: number;
  lastUsed: number;
  /** Dropped from the cache: close once the last reader is done. */
  dropped: boolean;
}

/**
 * Descriptors of immutable objects kept open between reads (the local blob store's reads of file
 * versions): a ranged read then costs one `read` in the thread pool instead of open, read and close.
 * At most `max` are kept (least recently used go first); one unused for `idleMs` is closed. A
 * descriptor is closed only when no stream reads through it. Reads are positional, so concurrent
 * streams share a descriptor safely.
 */
export class OpenFiles {
  private readonly entries = new Map<string, Entry>();
  private readonly opening = new Map<string, Promise<Entry>>();
  /** Runs only while descriptors are kept. */
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly max = 64,
    private readonly idleMs = 10_000,
  ) {}

  /**
   * The open file of `key` (opened with `open` when not kept), for one reader: call `release` once
   * its stream has finished.
   */
  async acquire(key: string, open: () => Promise<OpenFile>): Promise<OpenFile & { release(): void }> {
    let entry = this.entries.get(key);
    if (entry) {
      // Most recently used last: the map's order is the eviction order.
      this.entries.delete(key);
      this.entries.set(key, entry);
    } else {
      let pending = this.opening.get(key);
      if (!pending) {
        pending = open().then((file) => ({ ...file, readers: 0, lastUsed: 0, dropped: false }));
        this.opening.set(key, pending);
        const mine = pending;
        mine.then(
          (opened) => {
            // Dropped while opening (the object was replaced): this reader only, then closed.
            if (this.opening.get(key) !== mine) {
              opened.dropped = true;
              return;
            }
            this.opening.delete(key);
            this.entries.set(key, opened);
            this.trim();
            this.sweeper ??= setInterval(() => this.sweep(), this.idleMs).unref();
          },
          () => {
            if (this.opening.get(key) === mine) this.opening.delete(key);
          },
        );
      }
      entry = await pending;
    }
    const held = entry;
    held.readers++;
    let released = false;
    return {
      fd: held.fd,
      stats: held.stats,
      release: () => {
        if (released) return;
        released = true;
        held.readers--;
        held.lastUsed = Date.now();
        if (held.dropped && held.readers === 0) close(held.fd, () => {});
      },
    };
  }

  /** Forgets `key` (its object was replaced or deleted): the descriptor closes after its last reader. */
  drop(key: string): void {
    this.opening.delete(key);
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.retire(entry);
  }

  private retire(entry: Entry): void {
    entry.dropped = true;
    if (entry.readers === 0) close(entry.fd, () => {});
  }

  private trim(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.max) return;
      this.entries.delete(key);
      this.retire(entry);
    }
  }

  private sweep(): void {
    const before = Date.now() - this.idleMs;
    for (const [key, entry] of this.entries) {
      if (entry.readers === 0 && entry.lastUsed < before) {
        this.entries.delete(key);
        this.retire(entry);
      }
    }
    if (this.entries.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }
}
