import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { WebIO } from '@gltf-transform/core';
import { EXTMeshoptCompression, KHRMeshQuantization } from '@gltf-transform/extensions';
import { measure, parseStl, torusPoint, torusStl, translateModel } from './index';
import { meshoptimizer } from './indexed-mesh';

/** The part of gltf-validator's API used here (it ships no types). */
interface ValidationReport {
  issues: { numErrors: number; messages: { code: string; message: string; severity: number }[] };
}
const validator = require('gltf-validator') as {
  validateBytes(data: Uint8Array): Promise<ValidationReport>;
};

/** The issue's STL: 57,600 facets, 2.8 MB. */
const torus = { ring: 20, tube: 6, around: 240, across: 120 };
const stl = torusStl(torus);
const source = parseStl(stl).bbox as { min: number[]; max: number[] };

/** The validator's errors (severity 0) on a GLB: none expected. */
const errorsOf = async (glb: Uint8Array) => {
  const { issues } = await validator.validateBytes(glb);
  const errors = issues.messages.filter((m) => m.severity === 0).map((m) => `${m.code}: ${m.message}`);
  return issues.numErrors === 0 ? [] : errors.length > 0 ? errors : [`${issues.numErrors} errors`];
};

/** The min and max the GLB declares on its POSITION accessors, over all of them. */
function declaredBounds(glb: Uint8Array): { min: number[]; max: number[] } {
  const bytes = Buffer.from(glb);
  const json = JSON.parse(bytes.subarray(20, 20 + bytes.readUInt32LE(12)).toString('utf8'));
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  for (const mesh of json.meshes) {
    for (const primitive of mesh.primitives) {
      const accessor = json.accessors[primitive.attributes.POSITION];
      for (let k = 0; k < 3; k++) {
        min[k] = Math.min(min[k], accessor.min[k]);
        max[k] = Math.max(max[k], accessor.max[k]);
      }
    }
  }
  return { min, max };
}

function expectBounds(actual: { min: number[]; max: number[] }, expected: { min: number[]; max: number[] }) {
  for (const side of ['min', 'max'] as const)
    actual[side].forEach((v, k) => {
      expect(v).toBeCloseTo(expected[side][k], 5);
    });
}

/** The largest angle (degrees) between a vertex normal of the GLB and the torus's true normal there. */
async function worstNormalDegrees(glb: Uint8Array): Promise<number> {
  const doc = await new WebIO().readBinary(glb);
  const primitive = doc.getRoot().listMeshes()[0].listPrimitives()[0];
  const positions = primitive.getAttribute('POSITION')?.getArray() as Float32Array;
  const normals = primitive.getAttribute('NORMAL')?.getArray() as Float32Array;
  let worst = 0;
  for (let v = 0; v < positions.length; v += 3) {
    const [x, y, z] = [positions[v], positions[v + 1], positions[v + 2]];
    const i = (Math.atan2(y, x) / (2 * Math.PI)) * torus.around;
    const j = (Math.atan2(z, Math.hypot(x, y) - torus.ring) / (2 * Math.PI)) * torus.across;
    const { normal } = torusPoint(torus, i, j);
    const dot = normal[0] * normals[v] + normal[1] * normals[v + 1] + normal[2] * normals[v + 2];
    worst = Math.max(worst, (Math.acos(Math.min(1, dot)) * 180) / Math.PI);
  }
  return worst;
}

describe('translating a closed mesh (a torus STL of 57,600 facets)', () => {
  test('one vertex a position, shaded smooth: a valid GLB smaller than the STL, with its bounds', async () => {
    const model = await translateModel(stl, 'stl');
    // 240 x 120 grid points: no vertex split, since no two neighbouring facets meet at a crease.
    expect(model).toMatchObject({ triangles: 57_600, vertices: 28_800 });
    expect(await worstNormalDegrees(model.glb)).toBeLessThan(0.2);
    expect(model.glb.length).toBeLessThan(stl.length / 2);
    expect(await errorsOf(model.glb)).toEqual([]);
    expectBounds(declaredBounds(model.glb), source);
    expectBounds(model.bounds, source);
  });

  test('compressed: about a tenth of the STL, valid, bounds within the quantization step', async () => {
    const model = await translateModel(stl, 'stl', { compress: true });
    expect(model.glb.length).toBeLessThan(stl.length / 8);
    expect(await errorsOf(model.glb)).toEqual([]);
    const { MeshoptDecoder } = await meshoptimizer();
    await MeshoptDecoder.ready;
    const read = await new WebIO()
      .registerExtensions([EXTMeshoptCompression, KHRMeshQuantization])
      .registerDependencies({ 'meshopt.decoder': MeshoptDecoder })
      .readBinary(model.glb);
    const { bounds, triangles } = measure(read);
    expect(triangles).toBe(57_600);
    // Positions are quantized to 14 bits of the largest extent (52 mm): within half a step.
    const step = 52 / (2 ** 14 - 1);
    for (const side of ['min', 'max'] as const)
      bounds[side].forEach((v, k) => {
        expect(Math.abs(v - source[side][k])).toBeLessThanOrEqual(step / 2);
      });
  });

  test.each([0.5, 0.25, 0.1])(
    'simplify %p keeps that share of the triangles (within 10%) and the bounds',
    async (ratio) => {
      const model = await translateModel(stl, 'stl', { simplify: ratio });
      expect(model.triangles / (57_600 * ratio)).toBeGreaterThanOrEqual(0.9);
      expect(model.triangles / (57_600 * ratio)).toBeLessThanOrEqual(1.1);
      // Still smooth: about a vertex for two triangles, as on any closed surface of genus 1.
      expect(model.vertices).toBeLessThan(model.triangles * 0.55);
      expect(await errorsOf(model.glb)).toEqual([]);
      expectBounds(declaredBounds(model.glb), source);
    },
  );
});

describe('translating a STEP assembly', () => {
  const assembly = readFileSync(
    join(
      dirname(require.resolve('occt-import-js/package.json')),
      'test/testfiles/cax-if/as1-oc-214/as1-oc-214.stp',
    ),
  );

  test('simplified body by body: about the share asked of the triangles, each body kept, valid', async () => {
    const full = await translateModel(assembly, 'step');
    expect(await errorsOf(full.glb)).toEqual([]);
    for (const ratio of [0.5, 0.25]) {
      const model = await translateModel(assembly, 'step', { simplify: ratio });
      expect(model.meshes).toBe(full.meshes);
      expect(model.triangles / (full.triangles * ratio)).toBeGreaterThanOrEqual(0.9);
      expect(model.triangles / (full.triangles * ratio)).toBeLessThanOrEqual(1.1);
      expect(await errorsOf(model.glb)).toEqual([]);
      expectBounds(model.bounds, full.bounds);
    }
  });
});
