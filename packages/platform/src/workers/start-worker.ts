import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
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
 * worker thread gets no jest transform, so the folder's `.ts` sources are transpiled here (with the
 * `typescript` dev dependency, never needed in production; cached on disk by content) and the
 * worker starts from a small bootstrap that loads them through a `.ts` require hook. The entry may import sibling
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

/**
 * Transpiled sources, on disk by content (and the compiler's version): each jest file has its own
 * module registry, so a cache in this module alone transpiled a folder again in every test file that
 * started a worker (0.3-0.8 s of CPU, synchronous, on the thread that also renews job leases).
 */
const CACHE_DIR = path.join(tmpdir(), 'hwp-worker-sources');

function transpiled(dirs: string[]): Record<string, string> {
  // A plain Node require, outside jest's module registry: typescript loads once per process, and
  // only when a source is not in the cache yet.
  const load = createRequire(__filename);
  let ts: TypeScriptApi | undefined;
  const tsVersion = (load('typescript/package.json') as { version: string }).version;
  const out: Record<string, string> = {};
  for (const dir of dirs) {
    for (const file of readdirSync(dir)) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.endsWith('.d.ts')) continue;
      const fileName = path.join(dir, file);
      const source = readFileSync(fileName, 'utf8');
      const key = createHash('sha256').update(`${tsVersion}\0${fileName}\0${source}`).digest('hex');
      const cached = path.join(CACHE_DIR, `${key}.js`);
      if (existsSync(cached)) {
        out[fileName] = readFileSync(cached, 'utf8');
        continue;
      }
      ts ??= load('typescript') as TypeScriptApi;
      out[fileName] = ts.transpileModule(source, {
        fileName,
        compilerOptions: {
          module: ts.ModuleKind.CommonJS,
          target: ts.ScriptTarget.ES2022,
          esModuleInterop: true,
        },
      }).outputText;
      // Written whole under a name of its own, then renamed: a reader never sees half a file.
      mkdirSync(CACHE_DIR, { recursive: true });
      const partial = `${cached}.${process.pid}.${randomBytes(4).toString('hex')}`;
      writeFileSync(partial, out[fileName]);
      renameSync(partial, cached);
    }
  }
  return out;
}
