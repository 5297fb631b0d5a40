import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type ResourceLimits, Worker } from 'node:worker_threads';

export interface StartWorkerOptions {
  /** `__filename` of the module that starts the worker: `.js` when built, `.ts` under ts-jest. */
  callerFile: string;
  /** The worker's entry module, without extension, in the caller's folder. */
  entry: string;
  workerData: Record<string, unknown>;
  transferList?: ArrayBuffer[];
  resourceLimits?: ResourceLimits;
}

/**
 * Starts a worker thread on `<caller's folder>/<entry>` with `workerData`.
 *
 * Built code runs `<entry>.js` from the same dist folder. Under ts-jest (the caller is `.ts`) a
 * worker thread gets no jest transform, so the folder's `.ts` sources are transpiled here once per
 * folder (with the `typescript` dev dependency, never needed in production) and the worker starts
 * from a small bootstrap that loads them through a `.ts` require hook. The entry may import sibling
 * folders (`../x`): list them in `extraDirs`. Node modules load natively either way.
 */
export function startWorker(options: StartWorkerOptions & { extraDirs?: string[] }): Worker {
  const dir = path.dirname(options.callerFile);
  const { workerData, transferList, resourceLimits } = options;
  if (path.extname(options.callerFile) !== '.ts') {
    return new Worker(path.join(dir, `${options.entry}.js`), { workerData, transferList, resourceLimits });
  }
  const dirs = [dir, ...(options.extraDirs ?? []).map((d) => path.resolve(dir, d))];
  return new Worker(TS_BOOTSTRAP, {
    eval: true,
    workerData: {
      ...workerData,
      __entry: path.join(dir, `${options.entry}.ts`),
      __sources: transpiled(dirs),
    },
    transferList,
    resourceLimits,
  });
}

const TS_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
require.extensions['.ts'] = (module, filename) => {
  const code = workerData.__sources[filename];
  if (code === undefined) throw new Error('worker: no transpiled source for ' + filename);
  module._compile(code, filename);
};
require(workerData.__entry);
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

const cache = new Map<string, Record<string, string>>();

function transpiled(dirs: string[]): Record<string, string> {
  const key = dirs.join('|');
  const cached = cache.get(key);
  if (cached) return cached;
  // A plain Node require, outside jest's module registry: typescript loads once per process.
  const ts = createRequire(__filename)('typescript') as TypeScriptApi;
  const compilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
  };
  const out: Record<string, string> = {};
  for (const dir of dirs) {
    for (const file of readdirSync(dir)) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.endsWith('.d.ts')) continue;
      const fileName = path.join(dir, file);
      out[fileName] = ts.transpileModule(readFileSync(fileName, 'utf8'), {
        fileName,
        compilerOptions,
      }).outputText;
    }
  }
  cache.set(key, out);
  return out;
}
