/**
 * A bounded map whose entries lapse at their own time: the request-path caches (verified tokens,
 * user rows, memberships). Past `capacity`, the oldest entry goes first (a Map keeps insertion order).
 */
export class ExpiringMap<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > Date.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Keeps `value` until the epoch millisecond `until`. */
  set(key: K, value: V, until: number): V {
    if (!this.entries.has(key) && this.entries.size >= this.capacity)
      this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, { value, until });
    return value;
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}
