import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Validates a document against the official OpenAPI 3.1 schema with
 * @seriousme/openapi-schema-validator (ESM-only, so it runs in a child process).
 */
export async function validateOpenApi(document: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const cli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
  try {
    const { stdout } = await run(process.execPath, [cli, file]);
    return JSON.parse(stdout);
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout ?? '';
    return stdout ? JSON.parse(stdout) : { valid: false, errors: String(error) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
