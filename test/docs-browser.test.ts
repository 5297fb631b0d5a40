import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { apiService, loadApiConfig } from '@hwp/api-service';
import { collabService, loadCollabConfig } from '@hwp/collab-service';
import type { BaseConfig, ServiceDefinition } from '@hwp/platform';
import { listen, startTestService, type TestService } from '@hwp/platform/test-kit';

/**
 * `/docs` in a real browser reached by a host name other than 127.0.0.1 (Chromium from Debian's
 * archive; `.ci/run` installs it when missing). A plain-http host that sent CSP
 * `upgrade-insecure-requests` left the page blank: the browser fetched the Swagger assets over https.
 */
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const HOST = 'plm-docs.example.test';

function renderedDom(url: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      CHROMIUM as string,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        `--host-resolver-rules=MAP ${HOST} 127.0.0.1:${port}`,
        '--virtual-time-budget=15000',
        '--dump-dom',
        url,
      ],
      { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

const hosts: [string, ServiceDefinition<BaseConfig>, (env: NodeJS.ProcessEnv) => BaseConfig, string][] = [
  ['API host', apiService as ServiceDefinition<BaseConfig>, loadApiConfig, '/auth/signup'],
  ['collaboration host', collabService as ServiceDefinition<BaseConfig>, loadCollabConfig, '/v1/parts'],
];

(CHROMIUM ? describe.each(hosts) : describe.skip.each(hosts))(
  '%s /docs in Chromium',
  (_l, definition, load, path) => {
    let service: TestService<BaseConfig>;
    let server: Awaited<ReturnType<typeof listen>>;
    beforeAll(async () => {
      service = await startTestService(definition, load);
      server = await listen(service.app);
    });
    afterAll(async () => {
      await server?.close();
      await service?.stop();
    });

    it('renders the operation list by a non-loopback host name over plain http', async () => {
      const port = Number(new URL(server.url).port);
      const dom = await renderedDom(`http://${HOST}:${port}/docs/`, port);
      expect(dom).toContain('class="swagger-ui');
      expect(dom).toMatch(/class="opblock opblock-/);
      expect(dom).toContain(path);
    }, 90_000);
  },
);
