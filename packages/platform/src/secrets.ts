import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A secret generated once and kept in the data folder (embedded mode needs no setup). */
export function persistentSecret(dir: string, file: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    const secret = randomBytes(32).toString('base64url');
    writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  }
}
