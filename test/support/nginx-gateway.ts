import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedDataDir, ROOT, type ServiceProcess, spawnService, waitForStatus } from '../process-kit';

/** Debian's nginx (`apt-get install nginx`; .ci/run installs it when missing). */
export function nginxBinary(): string {
  for (const candidate of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'])
    if (existsSync(candidate)) return candidate;
  throw new Error('nginx is not installed (apt-get install -y nginx)');
}

function replaceOnce(text: string, from: string | RegExp, to: string): string {
  const replaced = text.replace(from, to);
  if (replaced === text) throw new Error(`infra/nginx/gateway.conf no longer contains ${String(from)}`);
  return replaced;
}

export interface GatewayPorts {
  gateway: number;
  /** The port of each API host process (one `server` line each, as Docker's DNS gives one address per replica). */
  api: number | number[];
  collab: number | number[];
}

const servers = (ports: number | number[]) =>
  [ports]
    .flat()
    .map((port) => `server 127.0.0.1:${port};`)
    .join('\n    ');

/**
 * The compose gateway's own configuration (infra/nginx/gateway.conf), changed only where docker and
 * this machine differ: the upstreams are local ports instead of service names re-resolved through
 * Docker's DNS (which answers with every replica's address), and it listens on a free loopback port
 * instead of 80.
 */
export function gatewayConfig(ports: GatewayPorts): string {
  let conf = readFileSync(join(ROOT, 'infra/nginx/gateway.conf'), 'utf8');
  conf = replaceOnce(conf, /^resolver .*;\n/m, '');
  conf = replaceOnce(conf, /^resolver_timeout .*;\n/m, '');
  conf = replaceOnce(conf, 'server api-service:3000 resolve;', servers(ports.api));
  conf = replaceOnce(conf, 'server collab-service:4000 resolve;', servers(ports.collab));
  conf = replaceOnce(conf, 'listen 80 default_server;', `listen 127.0.0.1:${ports.gateway} default_server;`);
  return conf;
}

export interface Gateway {
  url: string;
  process: ServiceProcess;
  /** `host:port` of the upstream of every request logged so far whose path starts with `prefix`. */
  upstreams(prefix: string): string[];
  stop(): Promise<void>;
}

/**
 * nginx in the foreground with the gateway config inside an http {} block like the official
 * image's (mime types, sendfile, keepalive), its pid, logs and temp files in a private folder.
 */
export async function startGateway(ports: GatewayPorts): Promise<Gateway> {
  const port = ports.gateway;
  const dir = embeddedDataDir('hwp-gateway-');
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  writeFileSync(join(dir, 'gateway.conf'), gatewayConfig(ports));
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      // As root, the workers would otherwise run as nobody, who cannot write the private temp folders.
      process.getuid?.() === 0 ? 'user root;' : '',
      'daemon off;',
      'worker_processes 1;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      'events { worker_connections 512; }',
      'http {',
      '  include /etc/nginx/mime.types;',
      '  default_type application/octet-stream;',
      '  sendfile on;',
      '  keepalive_timeout 65;',
      // Which upstream answered each request: how the tests see that every replica takes its share.
      "  log_format upstreams '$upstream_addr $request_method $uri';",
      `  access_log ${dir}/access.log upstreams;`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t};`),
      `  include ${dir}/gateway.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  const args = ['-p', dir, '-c', join(dir, 'nginx.conf')];
  const checked = spawnSync(nginxBinary(), ['-t', ...args], { encoding: 'utf8' });
  if (checked.status !== 0) throw new Error(`nginx -t refused the gateway config:\n${checked.stderr}`);
  const proc = spawnService(nginxBinary(), {}, args);
  const url = `http://127.0.0.1:${port}`;
  await waitForStatus(`${url}/gateway/healthz`, 200, 15_000, proc);
  return {
    url,
    process: proc,
    upstreams(prefix) {
      const log = join(dir, 'access.log');
      if (!existsSync(log)) return [];
      return readFileSync(log, 'utf8')
        .split('\n')
        .map((line) => line.split(' '))
        .filter(([addr, , path]) => addr && addr !== '-' && path?.startsWith(prefix))
        .map(([addr]) => addr);
    },
    async stop() {
      proc.kill('SIGQUIT');
      await proc.exited;
    },
  };
}
