import type { ImportSlots } from '../../../spreadsheets/upload';

/**
 * The process's import slots: `concurrency` imports run at once, the next ones wait in arrival order
 * up to `queueWaitMs` for a slot to come free.
 */
export class ImportQueue implements ImportSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limits: { concurrency: number; queueWaitMs: number }) {}

  /**
   * A slot for one import, waiting up to `queueWaitMs` (first come, first served) while `concurrency`
   * imports run; null when none came free in time or `signal` aborted. Call the result once to free it.
   */
  acquire(signal?: AbortSignal): Promise<(() => void) | null> {
    if (this.running < this.limits.concurrency) return Promise.resolve(this.grant());
    return new Promise((resolve) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', gone);
        const index = this.waiting.indexOf(take);
        if (index >= 0) this.waiting.splice(index, 1);
      };
      const take = () => {
        leave();
        resolve(this.grant());
      };
      const gone = () => {
        leave();
        resolve(null);
      };
      const timer = setTimeout(gone, this.limits.queueWaitMs);
      signal?.addEventListener('abort', gone, { once: true });
      this.waiting.push(take);
    });
  }

  private grant(): () => void {
    this.running++;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.running--;
      // The slot goes straight to the longest waiter.
      this.waiting[0]?.();
    };
  }
}
