/** The transport's delayed work (reattaches, retry waits), all cleared by close(). */
export class AmqpTimers {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** What to run instead when close() clears a timer (a retry wait that must not hang). */
  private readonly cancellations = new Map<NodeJS.Timeout, () => void>();

  constructor(private readonly isClosing: () => boolean) {}

  /** Runs `run` after `ms` unless the transport closes first; then `cancelled`, if given, runs at once. */
  later(ms: number, run: () => void, cancelled?: () => void): void {
    if (this.isClosing()) {
      cancelled?.();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.cancellations.delete(timer);
      if (!this.isClosing()) run();
      else cancelled?.();
    }, ms);
    this.timers.add(timer);
    if (cancelled) this.cancellations.set(timer, cancelled);
  }

  /** Clears every pending timer and runs the cancellations of those that have one. */
  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const cancelled of this.cancellations.values()) cancelled();
    this.cancellations.clear();
  }
}
