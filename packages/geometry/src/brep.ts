import type { MeshStats } from './mesh';

/** The part of occt-import-js's API used here (it ships no types). */
interface OcctMesh {
  name?: string;
  color?: [number, number, number];
  attributes: { position: { array: number[] }; normal?: { array: number[] } };
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

/** One tessellated solid or shell: indexed triangles, with OpenCascade's normals and colour. */
export interface BrepMesh {
  name: string;
  positions: Float32Array;
  normals: Float32Array | null;
  indices: Uint32Array;
  color: [number, number, number] | null;
}

let occt: Promise<Occt> | undefined;

/**
 * STEP and IGES geometry through occt-import-js (OpenCascade compiled to WebAssembly, LGPL-2.1,
 * used unmodified): the B-rep tessellated in millimetres, one mesh a solid or shell. Empty when
 * OpenCascade finds no geometry (a file of product structure only); null when it cannot read the file.
 */
export async function readBrep(data: Uint8Array, format: 'step' | 'iges'): Promise<BrepMesh[] | null> {
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
  if (!result.success) return null;
  return result.meshes
    .filter((mesh) => mesh.index.array.length > 0)
    .map((mesh, i) => ({
      name: mesh.name || `body ${i + 1}`,
      positions: Float32Array.from(mesh.attributes.position.array),
      normals: mesh.attributes.normal ? Float32Array.from(mesh.attributes.normal.array) : null,
      indices: Uint32Array.from(mesh.index.array),
      color: mesh.color ?? null,
    }));
}

/** STEP/IGES facts for the file record: triangles, bounding box and the triangles of a preview. */
export async function tessellate(data: Buffer, format: 'step' | 'iges'): Promise<MeshStats | null> {
  const meshes = await readBrep(data, format);
  if (!meshes || meshes.length === 0) return null;
  let triangles = 0;
  for (const mesh of meshes) triangles += mesh.indices.length / 3;
  const positions = new Float32Array(triangles * 9);
  const min: [number, number, number] = [Infinity, Infinity, Infinity];
  const max: [number, number, number] = [-Infinity, -Infinity, -Infinity];
  let vertices = 0;
  let at = 0;
  for (const mesh of meshes) {
    const p = mesh.positions;
    vertices += p.length / 3;
    for (let i = 0; i < p.length; i += 3) {
      for (let k = 0; k < 3; k++) {
        if (p[i + k] < min[k]) min[k] = p[i + k];
        if (p[i + k] > max[k]) max[k] = p[i + k];
      }
    }
    for (const index of mesh.indices) {
      positions[at++] = p[index * 3];
      positions[at++] = p[index * 3 + 1];
      positions[at++] = p[index * 3 + 2];
    }
  }
  return { format, triangles, vertices, components: meshes.length, bbox: { min, max }, positions };
}
