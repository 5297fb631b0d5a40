// Writes the generated tables of docs/configuration.md from the services' config specs.
// Run through `pnpm docs:config` (which builds first); test/readme/docs.test.ts fails when the page
// and the specs disagree.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const { configPage } = require(join(root, 'packages/platform/dist/index.js'));
const { configDocSections } = require(join(root, 'services/embedded/dist/index.js'));

const path = join(root, 'docs/configuration.md');
writeFileSync(path, configPage(readFileSync(path, 'utf8'), configDocSections()));
// Biome aligns the tables as `pnpm lint` expects them.
execFileSync(join(root, 'node_modules/.bin/biome'), ['format', '--write', path], { stdio: 'inherit' });
console.log(`wrote ${path}`);
