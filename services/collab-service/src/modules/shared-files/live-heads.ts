/**
 * The live heads of served files, kept per process so that a ranged read (`GET /v1/serve/...`)
 * needs no database round trip. A workspace's heads are forgotten whenever it changes: on this
 * process right after the changing transaction commits (before its response is sent, so whoever
 * wrote reads their write), on other replicas when the change's event arrives from the bus. A
 * head is kept at most `ttlMs` whatever happens (events missed in a broker outage), and a read
 * that raced a change is not kept (its workspace's entry was replaced while it ran).
 */
export class LiveHeads<T> {
  /** Per workspace, in the order they were last used (the first is forgotten first). */
  private readonly workspaces = new Map<string, Map<string, Kept<T>>>();
  private kept = 0;

  constructor(
    private readonly ttlMs = 5_000,
    /** Heads kept in all, and workspaces with an entry; past either the least recently used go. */
    private readonly max = 10_000,
  ) {}

  /** The head of `key` in the workspace: kept, or read with `read` (null: no such file, not kept). */
  async get(workspaceId: string, key: string, read: () => Promise<T | null>): Promise<T | null> {
    let heads = this.workspaces.get(workspaceId);
    const kept = heads?.get(key);
    if (kept && kept.until > performance.now()) return kept.head;
    if (heads)
      this.workspaces.delete(workspaceId); // re-inserted below: used now
    else heads = new Map();
    this.workspaces.set(workspaceId, heads);
    const head = await read();
    // Kept only while no change came in meanwhile (a change drops the workspace's map).
    if (head !== null && this.workspaces.get(workspaceId) === heads) {
      if (!heads.has(key)) this.kept++;
      heads.set(key, { head, until: performance.now() + this.ttlMs });
    }
    this.trim();
    return head;
  }

  /** Something in the workspace changed: its heads are read again. */
  changed(workspaceId: string): void {
    const heads = this.workspaces.get(workspaceId);
    if (!heads) return;
    this.kept -= heads.size;
    this.workspaces.delete(workspaceId);
  }

  private trim(): void {
    for (const [workspaceId, heads] of this.workspaces) {
      if (this.kept <= this.max && this.workspaces.size <= this.max) return;
      this.kept -= heads.size;
      this.workspaces.delete(workspaceId);
    }
  }
}

interface Kept<T> {
  head: T;
  until: number;
}
