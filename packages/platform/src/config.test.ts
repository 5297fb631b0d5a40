import { generateKeyPairSync } from 'node:crypto';
import {
  baseConfigSpecs,
  brokerUrls,
  ConfigError,
  loadConfig,
  ownPublicUrl,
  pemPrivateKey,
  pemPublicKeys,
} from './config';

describe('loadConfig', () => {
  it('applies the documented defaults when nothing is set', () => {
    const config = loadConfig({}, baseConfigSpecs(3000));
    expect(config).toEqual(
      expect.objectContaining({
        NODE_ENV: 'development',
        PORT: 3000,
        HOST: '0.0.0.0',
        DATA_DIR: '.data',
        SHUTDOWN_TIMEOUT_MS: 10_000,
        JSON_BODY_LIMIT_KB: 1024,
        MAX_UPLOAD_MB: 200,
      }),
    );
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.AMQP_URL).toBeUndefined();
    expect(config.S3_BUCKET).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty strings as unset, as docker-compose writes blanks', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' }, baseConfigSpecs(4000)).PORT).toBe(4000);
  });

  it('names every bad variable in one error', () => {
    let error: unknown;
    try {
      loadConfig(
        { PORT: 'x', NODE_ENV: 'staging', SHUTDOWN_TIMEOUT_MS: '-5', AMQP_URL: 'nope' },
        baseConfigSpecs(3000),
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(Object.keys((error as ConfigError).problems).sort()).toEqual([
      'AMQP_URL',
      'NODE_ENV',
      'PORT',
      'SHUTDOWN_TIMEOUT_MS',
    ]);
    expect((error as Error).message).toMatch(/^invalid configuration: .*PORT/);
  });

  it('declares quorum work queues unless AMQP_QUEUE_TYPE says classic, and refuses any other type', () => {
    expect(loadConfig({}, baseConfigSpecs(3000)).AMQP_QUEUE_TYPE).toBe('quorum');
    expect(loadConfig({ AMQP_QUEUE_TYPE: 'classic' }, baseConfigSpecs(3000)).AMQP_QUEUE_TYPE).toBe('classic');
    expect(() => loadConfig({ AMQP_QUEUE_TYPE: 'stream' }, baseConfigSpecs(3000))).toThrow(
      /AMQP_QUEUE_TYPE must be one of quorum, classic/,
    );
  });

  it('refuses half of a pair of S3 credentials', () => {
    expect(() => loadConfig({ S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k' }, baseConfigSpecs(3000))).toThrow(
      /S3_ACCESS_KEY_ID/,
    );
  });
});

describe('public URLs (PUBLIC_API_URL, PUBLIC_COLLAB_URL; PUBLIC_BASE_URL deprecated)', () => {
  const api = (env: NodeJS.ProcessEnv) =>
    loadConfig(env, baseConfigSpecs(3000), [], { ownPublicUrl: 'PUBLIC_API_URL' });
  const collab = (env: NodeJS.ProcessEnv) =>
    loadConfig(env, baseConfigSpecs(4000), [], { ownPublicUrl: 'PUBLIC_COLLAB_URL' });
  const both = {
    PUBLIC_API_URL: 'https://plm.example.com/',
    PUBLIC_COLLAB_URL: 'https://collab.example.com',
  };

  it("gives each host its own URL and the other host's, without a trailing slash", () => {
    for (const config of [api(both), collab(both)])
      expect([config.PUBLIC_API_URL, config.PUBLIC_COLLAB_URL]).toEqual([
        'https://plm.example.com',
        'https://collab.example.com',
      ]);
    expect(ownPublicUrl(api(both))).toBe('https://plm.example.com');
    expect(ownPublicUrl(collab(both))).toBe('https://collab.example.com');
  });

  it("takes the deprecated PUBLIC_BASE_URL as the running host's own setting when that is unset", () => {
    const old = { PUBLIC_BASE_URL: 'https://old.example.com/' };
    expect(api(old)).toMatchObject({
      PUBLIC_API_URL: 'https://old.example.com',
      PUBLIC_COLLAB_URL: undefined,
    });
    expect(collab(old)).toMatchObject({
      PUBLIC_COLLAB_URL: 'https://old.example.com',
      PUBLIC_API_URL: undefined,
    });
    expect(ownPublicUrl(collab(old))).toBe('https://old.example.com');
    // The other host's setting beside it is fine: the alias stands for this host's only.
    expect(collab({ ...old, PUBLIC_API_URL: 'https://api.example.com' })).toMatchObject({
      PUBLIC_API_URL: 'https://api.example.com',
      PUBLIC_COLLAB_URL: 'https://old.example.com',
    });
  });

  it("refuses a PUBLIC_BASE_URL that contradicts the host's own setting, and accepts one that agrees", () => {
    expect(() => api({ ...both, PUBLIC_BASE_URL: 'https://collab.example.com' })).toThrow(
      'PUBLIC_BASE_URL is a deprecated alias of PUBLIC_API_URL and differs from it: set PUBLIC_API_URL alone',
    );
    expect(() => collab({ ...both, PUBLIC_BASE_URL: 'https://plm.example.com' })).toThrow(
      /PUBLIC_BASE_URL is a deprecated alias of PUBLIC_COLLAB_URL/,
    );
    expect(ownPublicUrl(api({ ...both, PUBLIC_BASE_URL: 'https://plm.example.com' }))).toBe(
      'https://plm.example.com',
    );
  });

  it('falls back to the local address of the port when nothing is set (the embedded default)', () => {
    expect(ownPublicUrl(api({}))).toBe('http://127.0.0.1:3000');
    expect(ownPublicUrl(collab({ PORT: '4100', PUBLIC_API_URL: 'https://plm.example.com' }))).toBe(
      'http://127.0.0.1:4100',
    );
    expect(problemsOf(() => api({ PUBLIC_COLLAB_URL: 'ftp://files.example.com' }))).toEqual({
      PUBLIC_COLLAB_URL: 'must be a URL with scheme http or https (got "ftp")',
    });
  });
});

function problemsOf(load: () => unknown): Record<string, string> {
  try {
    load();
    return {};
  } catch (error) {
    return (error as ConfigError).problems;
  }
}

describe('config validators', () => {
  const problems = (env: NodeJS.ProcessEnv, specs: object = baseConfigSpecs(3000)) => {
    try {
      loadConfig(env, specs);
      return {};
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };

  it('refuses numbers outside their range with the value, and accepts the bounds', () => {
    expect(
      problems({ DB_POOL_SIZE: '0', OUTBOX_POLL_MS: '2147483648', BUS_MAX_ATTEMPTS: '2.5', PORT: '65536' }),
    ).toEqual({
      DB_POOL_SIZE: 'must be a positive integer (got "0")',
      OUTBOX_POLL_MS: 'must be an integer from 1 to 2147483647 (got "2147483648")',
      BUS_MAX_ATTEMPTS: 'must be a positive integer (got "2.5")',
      PORT: 'must be a port number from 1 to 65535 (got "65536")',
    });
    expect(problems({ DB_POOL_SIZE: '1', OUTBOX_POLL_MS: '2147483647', PORT: '65535' })).toEqual({});
  });

  it('keeps consumer transactions below the pool (requests need connections too)', () => {
    expect(problems({ DB_POOL_SIZE: '10', BUS_MAX_HANDLER_TRANSACTIONS: '10' })).toEqual({
      BUS_MAX_HANDLER_TRANSACTIONS: 'must be below DB_POOL_SIZE (10): requests need connections too',
    });
    expect(problems({ DB_POOL_SIZE: '10', BUS_MAX_HANDLER_TRANSACTIONS: '9' })).toEqual({});
  });

  it('checks TRUST_PROXY entries and URL schemes without echoing URLs', () => {
    expect(problems({ TRUST_PROXY: 'loopback, 10.0.0.0/8, 192.168.0.0/255.255.0.0, ::1/128' })).toEqual({});
    expect(problems({ TRUST_PROXY: 'loopback,gateway', AMQP_URL: 'http://user:secret@mq' })).toEqual({
      TRUST_PROXY:
        'must be a hop count or addresses, subnets, loopback, linklocal or uniquelocal (got "gateway")',
      AMQP_URL: 'must be a URL with scheme amqp or amqps (got "http")',
    });
  });

  it('takes one broker URL or the nodes of a cluster separated by commas, in their order', () => {
    const urls = (env: NodeJS.ProcessEnv) => brokerUrls(loadConfig(env, baseConfigSpecs(3000)));
    expect(urls({})).toEqual([]);
    expect(urls({ AMQP_URL: 'amqp://guest:guest@mq:5672' })).toEqual(['amqp://guest:guest@mq:5672']);
    expect(urls({ AMQP_URL: ' amqp://a:5672, amqps://b:5671/vh ,amqp://c:5672, ' })).toEqual([
      'amqp://a:5672',
      'amqps://b:5671/vh',
      'amqp://c:5672',
    ]);
    // AMQP_URLS is the same setting under a plural name; both may be set only when they agree.
    const cluster = 'amqp://a:5672,amqp://b:5672';
    expect(urls({ AMQP_URLS: ' amqp://a:5672 ,amqp://b:5672' })).toEqual(['amqp://a:5672', 'amqp://b:5672']);
    expect(problems({ AMQP_URL: cluster, AMQP_URLS: 'amqp://a:5672 , amqp://b:5672' })).toEqual({});
    expect(problems({ AMQP_URL: 'amqp://a:5672', AMQP_URLS: cluster })).toEqual({
      AMQP_URLS: 'differs from AMQP_URL: set one of the two',
    });
  });

  it('names the bad entry of a broker list by its place, never its text (it may hold a password)', () => {
    expect(
      problems({
        AMQP_URL: 'amqp://u:secret1@a:5672,http://u:secret2@b:5672,amqp://u:secret3@c:5672',
        AMQP_URLS: 'amqp://u:secret@a, not a url',
      }),
    ).toEqual({
      AMQP_URL: 'has an entry (2 of 3) that is not a URL with scheme amqp or amqps (got "http")',
      AMQP_URLS: 'has an entry (2 of 2) that is not a URL with scheme amqp or amqps',
    });
    expect(problems({ AMQP_URL: 'amqp://a:5672,amqp://b:5672,amqp://a:5672' })).toEqual({
      AMQP_URL: 'lists the same URL twice (entries 1 and 3)',
    });
    expect(problems({ AMQP_URL: ' , ' })).toEqual({
      AMQP_URL: 'must be one or more amqp or amqps URLs separated by commas',
    });
  });

  it('lets a publish wait 3 s for a failover by default, and not at all with 0', () => {
    expect(loadConfig({}, baseConfigSpecs(3000)).AMQP_PUBLISH_WAIT_MS).toBe(3000);
    expect(loadConfig({ AMQP_PUBLISH_WAIT_MS: '0' }, baseConfigSpecs(3000)).AMQP_PUBLISH_WAIT_MS).toBe(0);
    expect(problems({ AMQP_PUBLISH_WAIT_MS: '-1' })).toEqual({
      AMQP_PUBLISH_WAIT_MS: 'must be an integer from 0 to 2147483647 (got "-1")',
    });
  });

  it('parses PEM keys at start, also written on one line with \\n', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const pub = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const specs = { KEY: pemPrivateKey({ default: undefined }), PUBS: pemPublicKeys({ default: undefined }) };
    expect(problems({ KEY: pem.replace(/\n/g, '\\n'), PUBS: `${pub}\n${pub}` }, specs)).toEqual({});
    expect(problems({ KEY: pub, PUBS: pem }, specs)).toEqual({
      KEY: 'must be an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)',
      PUBS: 'must be PEM public keys (-----BEGIN PUBLIC KEY-----), separated by blank lines',
    });
  });
});
