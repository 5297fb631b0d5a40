// What a translation makes of a model, against the pipeline before issue 37 in the same run
// (./legacy.mjs): GLB bytes, triangles and vertices kept at each simplify ratio, seconds. Files: the
// issue's STL (a closed torus of 57,600 facets, 2.8 MB) and a STEP assembly (CAx-IF as1-oc-214, 18
// bodies, from occt-import-js's test files). No services: the library only.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { root, round2 } from '../lib/collab.mjs';
import { legacyTranslate } from './legacy.mjs';

const geometryRequire = createRequire(join(root, 'packages/geometry/package.json'));
const { torusStl, translateModel } = geometryRequire(join(root, 'packages/geometry/dist/index.js'));

const VARIANTS = [
  {},
  { compress: true },
  { simplify: 0.5 },
  { simplify: 0.25 },
  { simplify: 0.1 },
  { simplify: 0.1, compress: true },
];

async function timed(translate) {
  const started = process.hrtime.bigint();
  const model = await translate();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    triangles: model.triangles,
    vertices: model.vertices,
    glbBytes: model.glb.length,
    seconds: round2(seconds),
  };
}

/** Prints a JSON line a file and option set: the old pipeline (`before`) and translateModel (`after`). */
export async function qualityFigures() {
  const occt = dirname(geometryRequire.resolve('occt-import-js/package.json'));
  const files = [
    { file: 'torus-stl', format: 'stl', data: torusStl({ ring: 20, tube: 6, around: 240, across: 120 }) },
    {
      file: 'step-assembly',
      format: 'step',
      data: readFileSync(join(occt, 'test/testfiles/cax-if/as1-oc-214/as1-oc-214.stp')),
    },
  ];
  for (const { file, format, data } of files) {
    // Once each first, so neither side is charged for loading WebAssembly (meshoptimizer, OpenCascade).
    const source = await translateModel(data, format);
    await legacyTranslate(data, format);
    for (const options of VARIANTS) {
      const before = await timed(() => legacyTranslate(data, format, options));
      const after = await timed(() => translateModel(data, format, options));
      console.log(
        JSON.stringify({
          bench: 'translate-quality',
          file,
          sourceBytes: data.length,
          sourceTriangles: source.triangles,
          options,
          targetTriangles:
            options.simplify === undefined ? null : Math.round(source.triangles * options.simplify),
          before,
          after,
          keptBefore: round2(before.triangles / source.triangles),
          keptAfter: round2(after.triangles / source.triangles),
          baseline: 'the pipeline before issue 37 (bench/translate/legacy.mjs) in the same run',
        }),
      );
    }
  }
}
