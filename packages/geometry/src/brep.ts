import { setFlagsFromString } from 'node:v8';
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
  /** The WebAssembly heap as it stands (emscripten's view of its memory). */
  HEAPU8?: Uint8Array;
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

/** OpenCascade could not allocate what the file needs within the WebAssembly memory it may have. */
export class BrepMemoryError extends Error {
  override name = 'BrepMemoryError';
}

/** What OpenCascade (or the WebAssembly runtime) says when an allocation fails. */
const OUT_OF_MEMORY = /malloc failed|out of memory|OutOfMemory|Cannot enlarge memory|\bOOM\b/i;
let outOfMemory = false;
let memoryCapMb: number | null = null;
const watched = (write: (text: string) => void) => (text: string) => {
  if (OUT_OF_MEMORY.test(text)) outOfMemory = true;
  write(text);
};

/**
 * Caps the WebAssembly memory of this process at `mb` (V8's --wasm-max-mem-pages): OpenCascade's heap
 * may grow to 2 GB and a worker thread's heap limit (resourceLimits) does not count it. The flag is
 * the process's: call it where OpenCascade is the only WebAssembly that grows (a worker of its own).
 * Past the cap, readBrep throws BrepMemoryError.
 */
export function capWasmMemory(mb: number): void {
  setFlagsFromString(`--wasm-max-mem-pages=${Math.max(1, Math.floor(mb * 16))}`);
  memoryCapMb = mb;
}

function memoryError(): BrepMemoryError {
  return new BrepMemoryError(
    `OpenCascade needed more than ${memoryCapMb === null ? 'the' : `${memoryCapMb} MB of`} WebAssembly memory it may use`,
  );
}

/**
 * STEP and IGES geometry through occt-import-js (OpenCascade compiled to WebAssembly, LGPL-2.1,
 * used unmodified): the B-rep tessellated in millimetres, one mesh a solid or shell. Empty when
 * OpenCascade finds no geometry (a file of product structure only); null when it cannot read the file.
 */
export async function readBrep(data: Uint8Array, format: 'step' | 'iges'): Promise<BrepMesh[] | null> {
  // A plain require: the package is CommonJS without types. Its output is watched for failed
  // allocations (OpenCascade reports them and answers `success: false`, like an unreadable file).
  occt ??= (
    require('occt-import-js') as (module: {
      print: (text: string) => void;
      printErr: (text: string) => void;
    }) => Promise<Occt>
  )({ print: watched((text) => console.log(text)), printErr: watched((text) => console.error(text)) });
  const lib = await occt;
  const content = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const params = {
    linearUnit: 'millimeter',
    linearDeflectionType: 'bounding_box_ratio',
    linearDeflection: 0.002,
  };
  outOfMemory = false;
  let result: OcctResult;
  try {
    result = format === 'step' ? lib.ReadStepFile(content, params) : lib.ReadIgesFile(content, params);
  } catch (error) {
    // An allocation outside OpenCascade's own handling aborts the runtime.
    if (outOfMemory || (error instanceof Error && OUT_OF_MEMORY.test(error.message))) throw memoryError();
    throw error;
  }
  if (outOfMemory) throw memoryError();
  // Some failed allocations are caught inside and answered as an unreadable file: a read that failed
  // with the heap grown past half its cap is taken for one of those.
  const heapBytes = lib.HEAPU8?.length ?? 0;
  if (!result.success && memoryCapMb !== null && heapBytes >= memoryCapMb * 524_288) throw memoryError();
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
