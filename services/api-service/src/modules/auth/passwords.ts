import { type Algorithm, hash, verify } from '@node-rs/argon2';

// The package's `Algorithm` is an ambient const enum, which isolatedModules cannot read.
const ARGON2ID = 2 as Algorithm;

export interface PasswordHashCost {
  memoryKiB: number;
  iterations: number;
}

/**
 * argon2id (OWASP's first choice). Hashing runs on libuv's thread pool, so the event loop keeps
 * serving while a login is checked.
 */
export class PasswordHasher {
  private dummy: Promise<string> | undefined;

  constructor(private readonly cost: PasswordHashCost) {}

  hash(password: string): Promise<string> {
    return hash(password, {
      algorithm: ARGON2ID,
      memoryCost: this.cost.memoryKiB,
      timeCost: this.cost.iterations,
      parallelism: 1,
    });
  }

  /**
   * Checks `password` against `stored`. With no stored hash (unknown account, passwordless account)
   * it verifies against a dummy hash of the same cost and answers false, so a failed login takes
   * the same time whether or not the account exists.
   */
  async verify(stored: string | null, password: string): Promise<boolean> {
    if (!stored) {
      this.dummy ??= this.hash('dummy password that never matches');
      await verify(await this.dummy, password).catch(() => false);
      return false;
    }
    return verify(stored, password).catch(() => false);
  }

  /** Computes the dummy hash ahead of the first failed login (so that one is not slower). */
  async warmUp(): Promise<void> {
    this.dummy ??= this.hash('dummy password that never matches');
    await this.dummy;
  }
}
