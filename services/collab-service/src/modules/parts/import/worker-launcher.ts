import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type ResourceLimits, Worker } from 'node:worker_threads';

const WORKER_ENTRY = 'parse-worker';

/**
 * Starts the parse worker with `{ input }` as its workerData.
 *
 * Built code (this file is `.js`) runs `parse-worker.js` from the same dist folder. Under ts-jest
 * (this file is `.ts`) a worker thread gets no jest transform, so this folder's `.ts` sources are
 * transpiled here once (with the `typescript` dev dependency, never needed in production) and the
 * worker starts from a small bootstrap that loads them through a `.ts` require hook. Node modules
 * (xlsx, papaparse) load natively either way.
 */
export function startParseWorker(
  input: unknown,
  options: { transferList: ArrayBuffer[]; resourceLimits: ResourceLimits },
): Worker {
  if (path.extname(__filename) !== '.ts') {
    return new Worker(path.join(__dirname, `${WORKER_ENTRY}.js`), { workerData: { input }, ...options });
  }
  const entry = path.join(__dirname, `${WORKER_ENTRY}.ts`);
  return new Worker(TS_BOOTSTRAP, {
    eval: true,
    workerData: { input, entry, sources: transpiledSources() },
    ...options,
  });
}

const TS_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
require.extensions['.ts'] = (module, filename) => {
  const code = workerData.sources[filename];
  if (code === undefined) throw new Error('parse worker: no transpiled source for ' + filename);
  module._compile(code, filename);
};
require(workerData.entry);
`;

/** The part of the typescript API used here (a dev dependency, so not imported for its types). */
interface TypeScriptApi {
  ModuleKind: { CommonJS: number };
  ScriptTarget: { ES2022: number };
  transpileModule(
    source: string,
    options: { fileName: string; compilerOptions: Record<string, unknown> },
  ): { outputText: string };
}

let sources: Record<string, string> | undefined;

function transpiledSources(): Record<string, string> {
  if (sources) return sources;
  // A plain Node require, outside jest's module registry: typescript loads once per process.
  const ts = createRequire(__filename)('typescript') as TypeScriptApi;
  const compilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
  };
  const out: Record<string, string> = {};
  for (const file of readdirSync(__dirname)) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.endsWith('.d.ts')) continue;
    const fileName = path.join(__dirname, file);
    out[fileName] = ts.transpileModule(readFileSync(fileName, 'utf8'), {
      fileName,
      compilerOptions,
    }).outputText;
  }
  sources = out;
  return out;
}
