#!/usr/bin/env node
// Licence gate for the runtime (production) dependency tree of the whole workspace.
//
//   node infra/scripts/check-licenses.mjs              # runs `pnpm licenses list --prod --json`
//   node infra/scripts/check-licenses.mjs --input f.json   # checks a saved report instead
//   node infra/scripts/check-licenses.mjs --allowlist other.json   # another allowlist file
//
// Prints licence -> package count, then every package under a licence that is not plainly
// permissive. Exits 1 when
//   - a package's licence expression requires GPL or AGPL: an OR expression offering a non-GPL
//     alternative, e.g. "(MIT OR GPL-3.0)", is fine. LGPL is listed for review, not refused: the
//     product may ship an LGPL library used unmodified and replaceable (libvips under sharp).
//   - a package's licence is unknown / unparseable / proprietary ("UNLICENSED",
//     "SEE LICENSE IN ...") and the package is not in infra/scripts/license-allowlist.json.
// Exits 2 when the report itself cannot be produced or read.
//
// license-allowlist.json maps "name@version" (or "name" for every version) to
//   { "license": "<what the LICENSE file actually says>", "reason": "<who checked what>" }.
// It only vouches for unknown licences (including ones pnpm guessed from LICENSE-file text
// because package.json names none); it never excuses a declared GPL-family licence.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PNPM = 'pnpm@10.34.9';
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const option = (name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : (process.argv[at + 1] ?? '');
};
const allowlistPath = resolve(option('--allowlist') ?? join(here, 'license-allowlist.json'));
const shownAllowlistPath = relative(process.cwd(), allowlistPath).startsWith('..')
  ? allowlistPath
  : relative(process.cwd(), allowlistPath);

// Licences that impose no more than attribution. Anything else is listed for review.
const PERMISSIVE = new Set(
  [
    '0BSD',
    'Apache-2.0',
    'BlueOak-1.0.0',
    'BSD-1-Clause',
    'BSD-2-Clause',
    'BSD-2-Clause-Patent',
    'BSD-3-Clause',
    'BSD-3-Clause-Clear',
    'CC0-1.0',
    'CC-BY-3.0',
    'CC-BY-4.0',
    'ISC',
    'MIT',
    'MIT-0',
    'PSF-2.0',
    'Python-2.0',
    'Unlicense',
    'WTFPL',
    'X11',
    'Zlib',
  ].map((id) => id.toLowerCase()),
);

// GPL-*, AGPL-*, GPLv3, ...; not LGPL-* (an unmodified, replaceable LGPL library is allowed).
const isGplFamily = (id) => /gpl/i.test(id) && !/^lgpl/i.test(id);

// ---------------------------------------------------------------------------
// SPDX expressions: a tiny recursive-descent parser (OR binds looser than AND, WITH
// attaches an exception to one licence). Returns null when the text is not SPDX.
// ---------------------------------------------------------------------------
function parseSpdx(text) {
  const tokens = text.match(/\(|\)|[^\s()]+/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const isOp = (t, op) => typeof t === 'string' && t.toUpperCase() === op;

  function primary() {
    const t = tokens[i++];
    if (t === undefined || t === ')' || isOp(t, 'AND') || isOp(t, 'OR') || isOp(t, 'WITH')) {
      throw new Error('syntax');
    }
    if (t === '(') {
      const inner = orExpr();
      if (tokens[i++] !== ')') throw new Error('syntax');
      return inner;
    }
    let node = { type: 'license', id: t.replace(/\+$/, '') };
    if (isOp(peek(), 'WITH')) {
      i++;
      const exception = tokens[i++];
      if (!exception || exception === '(' || exception === ')') throw new Error('syntax');
      node = { ...node, exception };
    }
    return node;
  }
  function andExpr() {
    let left = primary();
    while (isOp(peek(), 'AND')) {
      i++;
      left = { type: 'and', left, right: primary() };
    }
    return left;
  }
  function orExpr() {
    let left = andExpr();
    while (isOp(peek(), 'OR')) {
      i++;
      left = { type: 'or', left, right: andExpr() };
    }
    return left;
  }

  try {
    if (tokens.length === 0) return null;
    const ast = orExpr();
    return i === tokens.length ? ast : null;
  } catch {
    return null;
  }
}

/** Can the licensee pick licences from this expression so that every picked leaf passes `ok`? */
function satisfiable(ast, ok) {
  switch (ast.type) {
    case 'license':
      return ok(ast);
    case 'and':
      return satisfiable(ast.left, ok) && satisfiable(ast.right, ok);
    case 'or':
      return satisfiable(ast.left, ok) || satisfiable(ast.right, ok);
    default:
      return false;
  }
}

const UNKNOWN_TEXT = /^(unknown|unlicensed|none|)$|see licen[cs]e in|custom:/i;

/**
 * Sorts one licence string into
 *   permissive  - satisfiable with permissive licences only
 *   review      - fine for the gate but not plainly permissive (MPL, EPL, ...): listed
 *   gpl         - every choice requires a GPL-family licence: fails
 *   unknown     - missing, proprietary or not an SPDX expression: fails unless allowlisted
 * `inferred` marks a licence pnpm guessed from LICENSE-file text (its " OR " there only
 * joins the names it found, it is not a choice), so no alternative is credited.
 */
function classify(text, inferred) {
  const raw = (text ?? '').trim();
  if (UNKNOWN_TEXT.test(raw)) return { verdict: 'unknown' };
  const ast = parseSpdx(raw);
  if (!ast) return { verdict: isGplFamily(raw) ? 'gpl' : 'unknown' };
  if (inferred && /(^|[^l])gpl/i.test(raw)) return { verdict: 'gpl' };
  if (!satisfiable(ast, (leaf) => !isGplFamily(leaf.id))) return { verdict: 'gpl' };
  if (satisfiable(ast, (leaf) => PERMISSIVE.has(leaf.id.toLowerCase()) && !leaf.exception)) {
    return { verdict: 'permissive' };
  }
  return { verdict: 'review' };
}

// ---------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------
function fail(code, message) {
  console.error(`check-licenses: ${message}`);
  process.exit(code);
}

function loadReport() {
  const file = option('--input');
  if (file !== undefined) {
    if (!file) fail(2, '--input needs a file');
    return JSON.parse(readFileSync(file, 'utf8'));
  }
  if (!existsSync(join(repoRoot, 'node_modules'))) {
    fail(2, `no node_modules in ${repoRoot}: run \`npx -y ${PNPM} install --frozen-lockfile\` first`);
  }
  // Under `pnpm licenses:check` reuse the running pnpm; otherwise fetch the pinned one with npx.
  const execPath = process.env.npm_execpath ?? '';
  const args = ['licenses', 'list', '--prod', '--json'];
  const [command, argv] =
    /pnpm/i.test(execPath) && /\.c?js$/.test(execPath)
      ? [process.execPath, [execPath, ...args]]
      : ['npx', ['-y', PNPM, ...args]];
  let out;
  try {
    out = execFileSync(command, argv, {
      cwd: repoRoot,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    fail(2, `\`pnpm licenses list\` failed:\n${error.stderr || error.message}`);
  }
  const start = out.indexOf('{');
  if (start === -1) {
    // pnpm prints nothing (or a notice) when there are no dependencies at all.
    return {};
  }
  try {
    return JSON.parse(out.slice(start));
  } catch (error) {
    fail(2, `could not parse the pnpm report: ${error.message}\n${out.slice(0, 500)}`);
  }
}

function loadAllowlist() {
  if (!existsSync(allowlistPath)) return {};
  let list;
  try {
    list = JSON.parse(readFileSync(allowlistPath, 'utf8'));
  } catch (error) {
    fail(2, `${shownAllowlistPath}: ${error.message}`);
  }
  for (const [key, entry] of Object.entries(list)) {
    if (!entry || typeof entry.reason !== 'string' || entry.reason.trim() === '') {
      fail(2, `${shownAllowlistPath}: entry "${key}" needs a "reason"`);
    }
  }
  return list;
}

/** True when the package's own package.json names no licence (pnpm then guessed from LICENSE). */
function licenceWasInferred(pkg) {
  const path = pkg.paths?.[0];
  if (!path) return false;
  try {
    const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8'));
    return manifest.license === undefined && manifest.licenses === undefined;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------
const report = loadReport();
const allowlist = loadAllowlist();

const rows = []; // { licence, verdict, packages: [{ id, name, version, inferred }] }
for (const [licence, packages] of Object.entries(report)) {
  const entries = [];
  for (const pkg of packages) {
    const inferred = licenceWasInferred(pkg);
    for (const version of pkg.versions ?? [pkg.version]) {
      entries.push({
        id: `${pkg.name}@${version}`,
        name: pkg.name,
        version,
        inferred,
        licence: pkg.license ?? licence,
      });
    }
  }
  rows.push({ licence, packages: entries });
}

const gplHits = [];
const unknownHits = [];
const allowlisted = [];
const reviewHits = [];
const table = [];
let total = 0;

for (const row of rows) {
  const verdicts = new Set();
  for (const pkg of row.packages) {
    const { verdict } = classify(pkg.licence, pkg.inferred);
    verdicts.add(verdict);
    if (verdict === 'gpl') {
      // A licence pnpm only guessed from LICENSE-file text may be vouched for after reading it.
      const entry = pkg.inferred ? (allowlist[pkg.id] ?? allowlist[pkg.name]) : undefined;
      if (entry) allowlisted.push({ ...pkg, entry });
      else gplHits.push(pkg);
    }
    if (verdict === 'review') reviewHits.push(pkg);
    if (verdict === 'unknown') {
      const entry = allowlist[pkg.id] ?? allowlist[pkg.name];
      if (entry) allowlisted.push({ ...pkg, entry });
      else unknownHits.push(pkg);
    }
  }
  total += row.packages.length;
  const verdict = ['gpl', 'unknown', 'review', 'permissive'].find((v) => verdicts.has(v)) ?? 'permissive';
  table.push({ licence: row.licence, count: row.packages.length, verdict, packages: row.packages });
}

table.sort((a, b) => b.count - a.count || a.licence.localeCompare(b.licence));
const width = Math.max(7, ...table.map((r) => r.licence.length));
console.log(`Runtime dependency licences (pnpm licenses list --prod, ${total} package versions)\n`);
console.log(`${'licence'.padEnd(width)}  packages  verdict`);
console.log(`${'-'.repeat(width)}  --------  ----------`);
for (const r of table) {
  console.log(`${r.licence.padEnd(width)}  ${String(r.count).padStart(8)}  ${r.verdict}`);
}

const nonPermissive = table.filter((r) => r.verdict !== 'permissive');
if (nonPermissive.length > 0) {
  console.log('\nPackages under licences that are not plainly permissive:');
  for (const r of nonPermissive) {
    console.log(`  ${r.licence} (${r.verdict}):`);
    for (const p of r.packages)
      console.log(`    ${p.id}${p.inferred ? '  [guessed by pnpm from the LICENSE file]' : ''}`);
  }
}

if (allowlisted.length > 0) {
  console.log(`\nUnknown licences vouched for in ${shownAllowlistPath}:`);
  for (const p of allowlisted) console.log(`  ${p.id}: ${p.entry.license ?? '?'} (${p.entry.reason})`);
}

let failed = false;
if (gplHits.length > 0) {
  failed = true;
  console.error('\nFAIL: runtime dependencies whose licence requires GPL or AGPL:');
  for (const p of gplHits) {
    console.error(
      `  ${p.id}: ${p.licence}${p.inferred ? '  (no licence field: guessed by pnpm from its LICENSE file)' : ''}`,
    );
  }
  console.error('Replace them, or move them out of the production dependency tree.');
}
if (unknownHits.length > 0) {
  failed = true;
  console.error('\nFAIL: runtime dependencies with an unknown licence:');
  for (const p of unknownHits) console.error(`  ${p.id}: ${JSON.stringify(p.licence)}`);
  console.error(
    `Read each package's LICENSE file; if it is acceptable, add it to ${shownAllowlistPath} as\n` +
      '  "name@version": { "license": "<SPDX id>", "reason": "<what was checked>" }',
  );
}

if (failed) process.exit(1);
console.log(
  `\nOK: no GPL/AGPL or unknown licences among ${total} runtime package versions` +
    (reviewHits.length > 0 ? ` (${reviewHits.length} listed above for review).` : '.'),
);
