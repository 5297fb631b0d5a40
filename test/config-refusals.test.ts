import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { createTestDatabase, type TestDatabase } from '@hwp/platform/test-kit';
import { embeddedDataDir, freePort, SCRIPTS, spawnService } from './process-kit';

const weakRsaKey = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .privateKey.export({ format: 'pem', type: 'pkcs8' })
  .toString();
const p384Key = generateKeyPairSync('ec', { namedCurve: 'secp384r1' })
  .privateKey.export({ format: 'pem', type: 'pkcs8' })
  .toString();

type Script = keyof typeof SCRIPTS;
const PREFIX: Record<Script, string> = { api: 'api-service', collab: 'collab-service', embedded: 'embedded' };

/** Runs a built entry point with `env` and returns its exit code and the lines it printed. */
async function run(
  script: Script,
  env: Record<string, string>,
): Promise<{ code: number | string; lines: string[] }> {
  const proc = spawnService(SCRIPTS[script], { DATA_DIR: embeddedDataDir('hwp-config-'), ...env });
  const code = await proc.exited;
  return { code, lines: proc.output().trim().split('\n') };
}

/** [entry point, variable, value, why]: each stops the process before it touches anything. */
const refusals: [Script, string, string, RegExp][] = [
  ['api', 'RATE_LIMIT_STANDARD_PER_WINDOW', '-5', /must be a positive integer \(got "-5"\)$/],
  ['api', 'LOGIN_FAILURE_WINDOW_MINUTES', '1.5', /must be an integer from 1 to \d+ \(got "1.5"\)$/],
  ['api', 'PASSWORD_HASH_MEMORY_KIB', '4', /must be an integer from 8 to \d+/],
  ['api', 'JWT_PRIVATE_KEY', 'nonsense', /must be an unencrypted PEM private key/],
  ['api', 'JWT_PRIVATE_KEY', weakRsaKey, /must be an RSA key of at least 2048 bits \(got 1024\)$/],
  ['api', 'JWT_PRIVATE_KEY', p384Key, /must be an RSA \(2048\+ bits\) or EC P-256 key \(got ec secp384r1\)$/],
  ['api', 'JWT_PREVIOUS_PUBLIC_KEYS', 'nonsense', /must be PEM public keys/],
  ['api', 'TRUST_PROXY', '10.0.0.0/99', /must be a hop count or addresses/],
  [
    'api',
    'DATABASE_URL',
    'mysql://db/app',
    /must be a URL with scheme postgres or postgresql \(got "mysql"\)$/,
  ],
  ['collab', 'PORT', '70000', /must be a port number from 1 to 65535 \(got "70000"\)$/],
  ['collab', 'SSE_HEARTBEAT_MS', '3000000000', /must be an integer from 1 to 2147483647/],
  ['collab', 'SESSION_TTL_HOURS', '0', /must be an integer from 1 to \d+ \(got "0"\)$/],
  ['collab', 'REQUIRES_INVITATION', 'maybe', /must be true or false \(got "maybe"\)$/],
  [
    'collab',
    'AUTH_JWKS_URL',
    'ftp://keys/jwks.json',
    /must be a URL with scheme http or https \(got "ftp"\)$/,
  ],
  ['embedded', 'COLLAB_PORT', '70000', /must be a port number from 1 to 65535 \(got "70000"\)$/],
  ['embedded', 'API_PORT', '0', /must be a port number from 1 to 65535 \(got "0"\)$/],
  ['embedded', 'IMPORT_CONCURRENCY', '-1', /must be a positive integer \(got "-1"\)$/],
];

describe('a bad configuration value', () => {
  it.each(refusals)(
    '%s: %s=%# stops the process with one line naming it',
    async (script, name, value, why) => {
      const { code, lines } = await run(script, { [name]: value });
      expect(code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0].startsWith(`${PREFIX[script]}: invalid configuration: ${name} `)).toBe(true);
      expect(lines[0]).toMatch(why);
      // The runner's own port variables are named, never the PORT it hands to the service.
      if (script === 'embedded') expect(lines[0]).not.toMatch(/\bPORT\b/);
      // Keys and secrets are never echoed.
      if (name.startsWith('JWT_')) expect(lines[0]).not.toContain(value.slice(0, 20));
    },
  );

  it('and a second one are named on the same line', async () => {
    const { code, lines } = await run('embedded', { COLLAB_PORT: 'x', RATE_LIMIT_AI_PER_WINDOW: '0' });
    expect(code).toBe(1);
    expect(lines).toEqual([expect.stringMatching(/^embedded: invalid configuration: /)]);
    expect(lines[0]).toContain('COLLAB_PORT must be a port number');
    expect(lines[0]).toContain('RATE_LIMIT_AI_PER_WINDOW must be a positive integer (got "0")');
  });
});

describe('a port that is taken', () => {
  let database: TestDatabase;
  let blocker: Server;
  let port: number;

  beforeAll(async () => {
    database = await createTestDatabase('cfg');
    port = await freePort();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => blocker?.close(resolve));
    await database?.drop();
  });

  it('stops the service with one line naming PORT', async () => {
    const { code, lines } = await run('api', {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
    });
    expect(code).toBe(1);
    expect(lines).toEqual([`api-service: cannot start: PORT ${port} is already in use`]);
  });
});
