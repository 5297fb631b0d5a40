import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { apiService, loadApiConfig } from '@hwp/api-service';
import { collabService, loadCollabConfig } from '@hwp/collab-service';
import type { BaseConfig, ServiceDefinition } from '@hwp/platform';
import { startTestService, type TestService } from '@hwp/platform/test-kit';
import request from 'supertest';

const run = promisify(execFile);
const ROOT = join(__dirname, '..');

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer?: string }[];
}
interface LintReport {
  totals: { errors: number; warnings: number };
  problems: LintProblem[];
}

/**
 * `redocly lint` (recommended ruleset, /redocly.yaml) of one document. @redocly/cli 2 bundles its
 * core (no @redocly/openapi-core to import) and is ESM, so it runs as the CLI on a temp file.
 */
async function lint(document: unknown): Promise<LintReport> {
  const dir = mkdtempSync(join(tmpdir(), 'redocly-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const cli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin/cli.js');
  const args = [
    cli,
    'lint',
    file,
    '--format=json',
    '--max-problems=1000',
    `--config=${join(ROOT, 'redocly.yaml')}`,
  ];
  const env = {
    ...process.env,
    REDOCLY_TELEMETRY: 'off',
    REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
    NO_COLOR: '1',
  };
  try {
    // Exit code 1 when a rule reports an error; the report is on stdout either way.
    const stdout = await run(process.execPath, args, { env, cwd: dir, maxBuffer: 64 * 1024 * 1024 }).then(
      (result) => result.stdout,
      (error: { stdout?: string; stderr?: string }) => {
        if (!error.stdout) throw new Error(`redocly lint did not report: ${error.stderr ?? String(error)}`);
        return error.stdout;
      },
    );
    return JSON.parse(stdout) as LintReport;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function describeProblems(problems: LintProblem[]): string {
  return problems
    .map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`)
    .join('\n');
}

const hosts: [string, ServiceDefinition<BaseConfig>, (env: NodeJS.ProcessEnv) => BaseConfig][] = [
  ['API host', apiService as ServiceDefinition<BaseConfig>, loadApiConfig],
  ['collaboration host', collabService as ServiceDefinition<BaseConfig>, loadCollabConfig],
];

describe.each(hosts)('%s OpenAPI document', (_label, definition, loadConfig) => {
  let service: TestService<BaseConfig>;

  beforeAll(async () => {
    service = await startTestService(definition, loadConfig);
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('passes redocly lint (recommended ruleset) without errors', async () => {
    const doc = await request(service.app).get('/openapi.json').expect(200);
    const report = await lint(doc.body);
    const errors = report.problems.filter((p) => p.severity === 'error');
    expect({ errors: report.totals.errors, problems: describeProblems(errors) }).toEqual({
      errors: 0,
      problems: '',
    });
  });

  it('holds only the schemas its operations reference, and declares servers and security', async () => {
    const { body } = await request(service.app).get('/openapi.json').expect(200);
    const text = JSON.stringify(body.paths);
    const schemas = Object.keys(body.components.schemas);
    // Every schema is reachable: directly from an operation or through another schema.
    const reachable = new Set<string>();
    const visit = (json: string) => {
      for (const [, name] of json.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
        if (reachable.has(name)) continue;
        reachable.add(name);
        visit(JSON.stringify(body.components.schemas[name]));
      }
    };
    visit(text);
    expect(schemas.filter((name) => !reachable.has(name))).toEqual([]);
    expect(body.servers).toEqual([expect.objectContaining({ url: '/' })]);
    for (const operations of Object.values(body.paths as Record<string, Record<string, unknown>>)) {
      for (const operation of Object.values(operations)) {
        expect(operation).toEqual(expect.objectContaining({ security: expect.any(Array) }));
      }
    }
    expect(text).not.toContain('"oneOf"');
  });
});
