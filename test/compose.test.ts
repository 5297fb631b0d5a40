import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { ROOT } from './process-kit';

/**
 * `docker compose config` without an engine: the compose files are interpolated the way Compose
 * does it (`${VAR}`, `${VAR:-default}`, `${VAR:?error}`, `$$`), validated against the Compose
 * Specification's own JSON schema (test/fixtures/compose-spec.json, Apache-2.0, from
 * compose-spec/compose-spec), merged as Compose merges an override file, and checked for what an
 * operator relies on.
 */
type Doc = Record<string, unknown>;
type Service = {
  image?: string;
  profiles?: string[];
  ports?: string[];
  expose?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, unknown>;
  volumes?: string[];
  configs?: { source: string }[];
  container_name?: string;
};

/** The `.env` the walk-through of docs/compose.md writes, with fixed values. */
const DOT_ENV: Record<string, string> = {
  OPS_TOKEN: 'ops-token-for-the-test',
  AUTH_SECRET: 'a'.repeat(64),
  SESSION_SECRET: 'b'.repeat(64),
  API_DB_PASSWORD: 'api-pass',
  COLLAB_DB_PASSWORD: 'collab-pass',
  JWT_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----\\nMII...\\n-----END PRIVATE KEY-----\\n',
  RABBITMQ_ERLANG_COOKIE: 'c'.repeat(40),
};

class MissingVariable extends Error {}

function interpolate(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === 'string')
    return value.replace(/\$\$|\$\{([A-Z0-9_]+)(?:(:?)([-?])([^}]*))?\}/g, (all, name, colon, op, arg) => {
      if (all === '$$') return '$';
      const set = name in env && (colon !== ':' || env[name] !== '');
      if (set) return env[name];
      if (op === '?') throw new MissingVariable(arg || `${name} is required`);
      return op === '-' ? arg : '';
    });
  if (Array.isArray(value)) return value.map((item) => interpolate(item, env));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  return value;
}

function load(file: string, env: Record<string, string>): Doc {
  return interpolate(parse(readFileSync(join(ROOT, file), 'utf8'), { merge: true }), env) as Doc;
}

/** Compose's merge of an override file: mappings key by key, sequences appended (13-merge.md). */
function merge(base: unknown, over: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(over)) return [...base, ...over];
  if (base && over && typeof base === 'object' && typeof over === 'object' && !Array.isArray(base)) {
    const out: Record<string, unknown> = { ...(base as Doc) };
    for (const [key, value] of Object.entries(over)) out[key] = key in out ? merge(out[key], value) : value;
    return out;
  }
  return over;
}

const services = (doc: Doc) => doc.services as Record<string, Service>;
/** The services `docker compose up` starts with these profiles active. */
const active = (doc: Doc, profiles: string[] = []) =>
  Object.entries(services(doc)).filter(
    ([, s]) => !s.profiles?.length || s.profiles.some((profile) => profiles.includes(profile)),
  );

describe('the compose files', () => {
  test('the walk-through of docs/compose.md writes every variable the production stack requires', () => {
    const doc = readFileSync(join(ROOT, 'docs/compose.md'), 'utf8');
    const block = /cat > \.env <<ENV\n([\s\S]*?)\nENV/.exec(doc)?.[1] ?? '';
    const written = block.split('\n').map((line) => line.split('=')[0]);
    expect(written.sort()).toEqual(Object.keys(DOT_ENV).sort());
  });

  const ajv = new Ajv({ allErrors: true, strict: false });
  const { $schema: _draft07, ...schema } = JSON.parse(
    readFileSync(join(__dirname, 'fixtures/compose-spec.json'), 'utf8'),
  ) as Doc;
  // Draft-07, which Ajv speaks by default; the file names its meta-schema by an https URL Ajv does not know.
  const validate = ajv.compile(schema);
  const base = load('docker-compose.yml', DOT_ENV);

  test.each(['docker-compose.yml', 'compose.prod.yml'])('%s follows the Compose Specification', (file) => {
    const doc = load(file, {
      ...DOT_ENV,
      SMTP_URL: 'smtp://mail.example.com:587',
      SMTP_FROM: 'x@example.com',
    });
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
  });

  test('the schema refuses what Compose refuses (an unknown key, a wrong type)', () => {
    expect(validate({ services: { api: { image: 'x', restart_policy: 'always' } } })).toBe(false);
    expect(validate({ services: { api: { image: 'x', ports: 8080 } } })).toBe(false);
  });

  test('stops with a message naming each secret the .env must set', () => {
    for (const name of ['OPS_TOKEN', 'SMTP_URL', 'SMTP_FROM', 'RABBITMQ_ERLANG_COOKIE']) {
      const env: Record<string, string> = {
        ...DOT_ENV,
        SMTP_URL: 'smtp://mail.example.com',
        SMTP_FROM: 'x@example.com',
      };
      delete env[name];
      expect(() => load('compose.prod.yml', env)).toThrow(new RegExp(`set ${name}`));
    }
    for (const name of ['AUTH_SECRET', 'SESSION_SECRET', 'JWT_PRIVATE_KEY', 'API_DB_PASSWORD']) {
      const env = { ...DOT_ENV };
      delete env[name];
      expect(() => load('docker-compose.yml', env)).toThrow(new RegExp(`set ${name}`));
    }
  });

  test('a local stack sends mail to Mailpit, whose web UI is on 127.0.0.1 only', () => {
    const all = services(base);
    expect(all['api-service'].environment?.SMTP_URL).toBe('smtp://mailpit:1025');
    expect(all.mailpit.profiles).toBeUndefined();
    expect(all.mailpit.ports).toEqual(['127.0.0.1:8025:8025']);
    expect(all.mailpit.expose).toEqual(['1025']);
  });

  test('the production override needs a real SMTP server and leaves Mailpit out', () => {
    const prod = merge(
      base,
      load('compose.prod.yml', {
        ...DOT_ENV,
        SMTP_URL: 'smtps://mail.example.com:465',
        SMTP_FROM: 'x@example.com',
      }),
    ) as Doc;
    expect(validate(prod) ? [] : validate.errors).toEqual([]);
    expect(services(prod)['api-service'].environment?.SMTP_URL).toBe('smtps://mail.example.com:465');
    expect(active(prod).map(([name]) => name)).not.toContain('mailpit');
    expect(active(prod, ['local-mail']).map(([name]) => name)).toContain('mailpit');
  });

  test('both services name the gateway as where clients reach each host', () => {
    const gatewayUrl = (doc: Doc) => {
      const published = services(doc).gateway.ports?.[0].split(':')[0];
      return `http://localhost:${published}`;
    };
    // One anchor: each host hands out URLs under its own setting and links to the other's.
    for (const [doc, expected] of [
      [base, gatewayUrl(base)],
      [
        load('docker-compose.yml', {
          ...DOT_ENV,
          PUBLIC_API_URL: 'https://plm.example.com',
          PUBLIC_COLLAB_URL: 'https://plm.example.com',
        }),
        'https://plm.example.com',
      ],
    ] as const)
      for (const name of ['api-service', 'collab-service']) {
        const env = services(doc)[name].environment ?? {};
        expect([name, env.PUBLIC_API_URL, env.PUBLIC_COLLAB_URL]).toEqual([name, expected, expected]);
        // The deprecated alias would stand for only one of them.
        expect(env.PUBLIC_BASE_URL).toBeUndefined();
      }
  });

  test('publishes only the gateway on every interface; everything else on loopback or not at all', () => {
    for (const [name, service] of active(base, ['observability', 'scan']))
      for (const port of service.ports ?? [])
        if (name !== 'gateway') expect(`${name} ${port}`).toMatch(/^\S+ 127\.0\.0\.1:/);
  });

  test('both services can be scaled: no fixed container name, no published port', () => {
    for (const name of ['api-service', 'collab-service']) {
      expect(services(base)[name].container_name).toBeUndefined();
      expect(services(base)[name].ports).toBeUndefined();
    }
    // The gateway re-resolves the service names, so it finds every replica Docker's DNS lists.
    const gateway = readFileSync(join(ROOT, 'infra/nginx/gateway.conf'), 'utf8');
    expect(gateway).toMatch(/^resolver 127\.0\.0\.11 valid=\d+s/m);
    expect(gateway).toContain('server api-service:3000 resolve;');
    expect(gateway).toContain('server collab-service:4000 resolve;');
  });

  test('the observability profile scrapes both services and provisions the dashboard', () => {
    const all = services(base);
    expect(all.prometheus.profiles).toEqual(['observability']);
    expect(all.grafana.profiles).toEqual(['observability']);
    expect((base.configs as Record<string, { content: string }>)['ops-token'].content).toBe(
      DOT_ENV.OPS_TOKEN,
    );
    const prometheus = parse(readFileSync(join(ROOT, 'infra/prometheus/prometheus.yml'), 'utf8')) as {
      scrape_configs: { dns_sd_configs?: { names: string[]; port: number }[] }[];
    };
    const targets = prometheus.scrape_configs.flatMap((c) =>
      (c.dns_sd_configs ?? []).flatMap((sd) => sd.names.map((n) => `${n}:${sd.port}`)),
    );
    expect(targets).toEqual(expect.arrayContaining(['api-service:3000', 'collab-service:4000']));
  });

  test('the cluster profile adds two RabbitMQ nodes that join the first by classic config peer discovery', () => {
    const all = services(base);
    const nodes = ['rabbitmq', 'rabbitmq-2', 'rabbitmq-3'];
    const clusterOnly = active(base, ['cluster'])
      .map(([name]) => name)
      .filter((name) => !active(base).some(([other]) => other === name));
    expect(clusterOnly).toEqual(['rabbitmq-2', 'rabbitmq-3']);
    // One cookie for all three nodes (and their CLI tools), the .env's when it sets one.
    const cookies = (doc: Doc) => nodes.map((n) => services(doc)[n].environment?.RABBITMQ_ERLANG_COOKIE);
    expect(new Set(cookies(base)).size).toBe(1);
    expect(cookies(base)[0]).toBeTruthy();
    const { RABBITMQ_ERLANG_COOKIE: _cookie, ...withoutCookie } = DOT_ENV;
    // A local stack runs on a default; production must set its own (see the secrets test).
    expect(cookies(load('docker-compose.yml', withoutCookie))[0]).toBe('hwp-local-erlang-cookie-change-me');
    const prod = merge(
      base,
      load('compose.prod.yml', {
        ...DOT_ENV,
        SMTP_URL: 'smtp://mail.example.com',
        SMTP_FROM: 'x@example.com',
      }),
    ) as Doc;
    expect(validate(prod) ? [] : validate.errors).toEqual([]);
    expect(cookies(prod)).toEqual([
      DOT_ENV.RABBITMQ_ERLANG_COOKIE,
      DOT_ENV.RABBITMQ_ERLANG_COOKIE,
      DOT_ENV.RABBITMQ_ERLANG_COOKIE,
    ]);
    expect(services(prod)['rabbitmq-2'].profiles).toEqual(['cluster']);
    // Nodes 2 and 3 read the peer list, start after node 1 is healthy, keep their own data, and
    // publish nothing (they are reached on the compose network only).
    const conf = readFileSync(join(ROOT, 'infra/rabbitmq/cluster.conf'), 'utf8');
    expect(conf).toMatch(/^cluster_formation\.peer_discovery_backend = classic_config$/m);
    const listed = [...conf.matchAll(/^cluster_formation\.classic_config\.nodes\.\d+ = (\S+)$/gm)].map(
      (m) => m[1],
    );
    for (const name of ['rabbitmq-2', 'rabbitmq-3']) {
      const node = all[name] as Service & { hostname?: string };
      expect(node.image).toBe(all.rabbitmq.image);
      expect(node.volumes).toContain('./infra/rabbitmq/cluster.conf:/etc/rabbitmq/conf.d/20-cluster.conf:ro');
      expect(node.volumes).toContain(`${name}-data:/var/lib/rabbitmq`);
      expect(node.depends_on).toEqual({ rabbitmq: { condition: 'service_healthy' } });
      expect(node.ports).toBeUndefined();
    }
    // Node names follow the hostnames, which must match the list.
    expect(listed).toEqual(nodes.map((n) => `rabbit@${(all[n] as { hostname?: string }).hostname}`));
    // Both services name every node, in order, as the config loader takes a list.
    for (const name of ['api-service', 'collab-service']) {
      const urls = (all[name].environment?.AMQP_URL ?? '').split(',').map((u) => new URL(u));
      expect(urls.map((u) => `${u.protocol}//${u.hostname}:${u.port}`)).toEqual(
        nodes.map((n) => `amqp://${n}:5672`),
      );
      // With the profile on they wait for all three, so their quorum queues get a replica on each.
      expect(all[name].depends_on).toEqual(
        expect.objectContaining({
          'rabbitmq-2': { condition: 'service_healthy', required: false },
          'rabbitmq-3': { condition: 'service_healthy', required: false },
        }),
      );
    }
  });

  test('every dependency, named volume, config and bind-mounted file exists', () => {
    const volumes = Object.keys(base.volumes as Doc);
    const configs = Object.keys(base.configs as Doc);
    for (const [name, service] of Object.entries(services(base))) {
      for (const dependency of Object.keys(service.depends_on ?? {}))
        expect(`${name} -> ${dependency}`).toBe(
          `${name} -> ${services(base)[dependency] ? dependency : '(missing)'}`,
        );
      for (const mount of service.volumes ?? []) {
        const source = mount.split(':')[0];
        if (source.startsWith('./')) expect(existsSync(join(ROOT, source))).toBe(true);
        else expect(volumes).toContain(source);
      }
      for (const config of service.configs ?? []) expect(configs).toContain(config.source);
    }
  });
});
