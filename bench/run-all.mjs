// Runs every benchmark folder's index.mjs in turn; each prints its own JSON lines.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = new URL('.', import.meta.url).pathname;
const only = process.argv.slice(2);
let failed = 0;
for (const name of readdirSync(dir).sort()) {
  const script = join(dir, name, 'index.mjs');
  if (!existsSync(script) || (only.length && !only.includes(name))) continue;
  const { status } = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (status !== 0) {
    console.error(`bench ${name} failed with ${status}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
