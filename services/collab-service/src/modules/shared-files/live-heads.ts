/**
 * The live heads of served files, kept per process so that a ranged read (`GET /v1/serve/...`)
 * needs no database round trip. A workspace's heads are forgotten whenever it changes: on this
 * process right after the changing transaction commits (before its response is sent, so whoever
 * wrote reads their write), on other replicas when the change's event arrives from the bus. A
 * head is kept at most `ttlMs` whatever happens (events missed in a broker outage), and a read
 * that raced a change is not kept (the workspace's generation moved while it ran).
 */
export class LiveHeads<T> {
  private readonly workspaces = new Map<string, { generation: number; heads: Map<string, Kept<T>> }>();
  private kept = 0;

  constructor(
    private readonly ttlMs = 5_000,
    /** Heads kept in all; past it the workspace used longest ago is forgotten whole. */
    private readonly max = 10_000,
  ) {}

  /** The head of `key` in the workspace: kept, or read with `read` (null: no such file, not kept). */
  async get(workspaceId: string, key: string, read: () => Promise<T | null>): Promise<T | null> {
    let state = this.workspaces.get(workspaceId);
    const kept = state?.heads.get(key);
    if (kept && kept.until > performance.now()) return kept.head;
    if (!state) {
      state = { generation: 0, heads: new Map() };
      this.workspaces.set(workspaceId, state);
    } else {
      // Used now: last in the order in which workspaces are forgotten.
      this.workspaces.delete(workspaceId);
      this.workspaces.set(workspaceId, state);
    }
    const { generation } = state;
    const head = await read();
    if (head !== null && state.generation === generation && this.workspaces.get(workspaceId) === state) {
      if (!state.heads.has(key)) this.kept++;
      state.heads.set(key, { head, until: performance.now() + this.ttlMs });
      this.trim();
    }
    return head;
  }

  /** Something in the workspace changed: its heads are read again. */
  changed(workspaceId: string): void {
    const state = this.workspaces.get(workspaceId);
    if (!state) return;
    state.generation++;
    this.kept -= state.heads.size;
    state.heads.clear();
  }

  private trim(): void {
    for (const [workspaceId, state] of this.workspaces) {
      if (this.kept <= this.max) return;
      this.kept -= state.heads.size;
      this.workspaces.delete(workspaceId);
    }
  }
}

interface Kept<T> {
  head: T;
  until: number;
}
