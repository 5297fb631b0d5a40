import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { WebIO } from '@gltf-transform/core';
import { objTwoCubes } from '@hwp/geometry/test-kit';
import { MeshParseError, modelFormatOf, readGlb, stepBoxes, translateModel } from './index';

const occtFile = (path: string) =>
  readFileSync(join(dirname(require.resolve('occt-import-js/package.json')), 'test/testfiles', path));

describe('translateModel', () => {
  test('an OBJ: flat-shaded cubes, bounds of both', async () => {
    const model = await translateModel(Buffer.from(objTwoCubes()), 'obj');
    // 6 faces a cube, 4 corners a face with the face's normal.
    expect(model).toMatchObject({ triangles: 24, vertices: 48, bounds: { min: [0, 0, 0], max: [6, 6, 6] } });
    const { glb, ...measured } = model;
    expect(await readGlb(glb)).toEqual(measured);
  });

  test('an IGES cube through OpenCascade', async () => {
    const model = await translateModel(occtFile('cube-10x10mm/Cube 10x10.igs'), 'iges');
    expect(model.triangles).toBe(12);
    expect(model.bounds.max.map((v, i) => Math.round(v - model.bounds.min[i]))).toEqual([10, 10, 10]);
  });

  test('a glTF with embedded buffers and a GLB are re-packed; external buffers fail with a reason', async () => {
    const step = await translateModel(Buffer.from(stepBoxes([{ at: [1, 2, 3], size: [4, 5, 6] }])), 'step');
    const again = await translateModel(step.glb, 'glb');
    expect(again).toMatchObject({ vertices: 24, triangles: 12, bounds: { min: [1, 2, 3], max: [5, 7, 9] } });
    const io = new WebIO();
    const { json, resources } = await io.writeJSON(await io.readBinary(step.glb));
    const embedded = {
      ...json,
      buffers: json.buffers?.map((b) => ({
        ...b,
        uri: `data:application/octet-stream;base64,${Buffer.from(resources[b.uri as string]).toString('base64')}`,
      })),
    };
    const fromJson = await translateModel(Buffer.from(JSON.stringify(embedded)), 'gltf');
    expect(fromJson).toMatchObject({ vertices: 24, triangles: 12 });
    const external = { ...json, buffers: json.buffers?.map((b) => ({ ...b, uri: 'elsewhere.bin' })) };
    await expect(translateModel(Buffer.from(JSON.stringify(external)), 'gltf')).rejects.toThrow(
      MeshParseError,
    );
    await expect(translateModel(Buffer.from('not a glb'), 'glb')).rejects.toThrow(/not a readable GLB/);
  });

  test('formats by extension', () => {
    expect(
      ['a.STL', 'b.stp', 'c@alt.step', 'd.igs', 'e.gltf', 'f.glb', 'g.obj', 'h.txt', 'noext'].map(
        modelFormatOf,
      ),
    ).toEqual(['stl', 'step', 'step', 'iges', 'gltf', 'glb', 'obj', null, null]);
  });
});
