import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface RunnerLock {
  /** Removes the lock file if it is still ours; idempotent and synchronous (safe in an exit handler). */
  release(): void;
}

/** A problem the person starting the embedded mode can fix; its message is one line that says how. */
export class EmbeddedDatabaseError extends Error {
  override name = 'EmbeddedDatabaseError';
}

/** Linux: state and start time of a process from /proc (undefined elsewhere or when it is gone). */
function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: split after its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], startTime: fields[19] };
  } catch {
    return undefined;
  }
}

/**
 * True while a process with this pid exists and is not a zombie (EPERM: it exists but belongs to
 * another user). With `startTime` (from the lock file), a different process that reused the pid
 * does not count.
 */
export function alive(pid: number, startTime?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(pid);
  if (!stat) return true;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return startTime === undefined || startTime === stat.startTime;
}

/**
 * One process at a time owns a data folder: `<root>/runner.pid` holds its pid, created exclusively.
 * A lock whose process is gone (the runner was killed) is taken over; a live one is a clear refusal.
 */
export function acquireRunnerLock(root: string, what: string): RunnerLock {
  const file = join(root, 'runner.pid');
  const mine = `${process.pid} ${procStat(process.pid)?.startTime ?? ''}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, mine, { flag: 'wx', mode: 0o644 });
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            if (readFileSync(file, 'utf8') === mine) unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = Number.NaN;
    let holderStart: string | undefined;
    try {
      const [pid, start] = readFileSync(file, 'utf8').trim().split(' ');
      holder = Number(pid);
      holderStart = start || undefined;
    } catch {
      continue; // removed meanwhile: try again
    }
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder, holderStart)) {
      throw new EmbeddedDatabaseError(
        `${root} is in use by another running instance (pid ${holder}) of the ${what}; stop it first or set DATA_DIR to another folder.`,
      );
    }
    try {
      unlinkSync(file); // its runner is gone
    } catch {
      // another starter removed it first
    }
  }
  throw new EmbeddedDatabaseError(
    `Could not take the lock ${file}; is another instance starting at the same time?`,
  );
}
