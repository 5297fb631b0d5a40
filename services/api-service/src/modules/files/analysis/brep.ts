import type { MeshStats } from './mesh';

/** The part of occt-import-js's API used here (it ships no types). */
interface OcctMesh {
  attributes: { position: { array: number[] } };
  index: { array: number[] };
}
interface OcctResult {
  success: boolean;
  meshes: OcctMesh[];
}
interface Occt {
  ReadStepFile(content: Uint8Array, params: Record<string, unknown> | null): OcctResult;
  ReadIgesFile(content: Uint8Array, params: Record<string, unknown> | null): OcctResult;
}

let occt: Promise<Occt> | undefined;

/**
 * STEP and IGES geometry through occt-import-js (OpenCascade compiled to WebAssembly, LGPL-2.1,
 * used unmodified): the B-rep is tessellated in millimetres, which gives the bounding box and the
 * triangles of a preview. Null when OpenCascade finds no geometry (a file of product structure only).
 */
export async function tessellate(data: Buffer, format: 'step' | 'iges'): Promise<MeshStats | null> {
  // A plain require: the package is CommonJS without types.
  occt ??= (require('occt-import-js') as () => Promise<Occt>)();
  const lib = await occt;
  const content = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const params = {
    linearUnit: 'millimeter',
    linearDeflectionType: 'bounding_box_ratio',
    linearDeflection: 0.002,
  };
  const result = format === 'step' ? lib.ReadStepFile(content, params) : lib.ReadIgesFile(content, params);
  if (!result.success || result.meshes.length === 0) return null;
  let triangles = 0;
  for (const mesh of result.meshes) triangles += mesh.index.array.length / 3;
  if (triangles === 0) return null;
  const positions = new Float32Array(triangles * 9);
  const min: [number, number, number] = [Infinity, Infinity, Infinity];
  const max: [number, number, number] = [-Infinity, -Infinity, -Infinity];
  let vertices = 0;
  let at = 0;
  for (const mesh of result.meshes) {
    const p = mesh.attributes.position.array;
    vertices += p.length / 3;
    for (let i = 0; i < p.length; i += 3) {
      for (let k = 0; k < 3; k++) {
        if (p[i + k] < min[k]) min[k] = p[i + k];
        if (p[i + k] > max[k]) max[k] = p[i + k];
      }
    }
    for (const index of mesh.index.array) {
      positions[at++] = p[index * 3];
      positions[at++] = p[index * 3 + 1];
      positions[at++] = p[index * 3 + 2];
    }
  }
  return { format, triangles, vertices, components: result.meshes.length, bbox: { min, max }, positions };
}
