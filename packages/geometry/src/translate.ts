import type { Document, Buffer as GltfBuffer, Primitive, WebIO } from '@gltf-transform/core';
import { readBrep } from './brep';
import { MeshParseError, parseObj, parseStl } from './mesh';

export const MODEL_FORMATS = ['stl', 'obj', 'gltf', 'glb', 'step', 'iges'] as const;
export type ModelFormat = (typeof MODEL_FORMATS)[number];

const EXTENSIONS: Record<string, ModelFormat> = {
  stl: 'stl',
  obj: 'obj',
  gltf: 'gltf',
  glb: 'glb',
  step: 'step',
  stp: 'step',
  iges: 'iges',
  igs: 'iges',
};

/** The model format of a file name by its extension (a branch suffix `@name` is part of the stem), or null. */
export function modelFormatOf(filename: string): ModelFormat | null {
  const dot = filename.lastIndexOf('.');
  return dot < 0 ? null : (EXTENSIONS[filename.slice(dot + 1).toLowerCase()] ?? null);
}

export interface TranslateOptions {
  /** Keep about this share (0-1, exclusive) of the vertices, through meshoptimizer's simplifier. */
  simplify?: number;
  /** Write EXT_meshopt_compression (quantized, meshopt-encoded buffers). */
  compress?: boolean;
}

export interface TranslatedModel {
  glb: Uint8Array;
  meshes: number;
  vertices: number;
  triangles: number;
  bounds: { min: [number, number, number]; max: [number, number, number] };
}

/** A stage of a translation and the share of the work done when it starts (0-100). */
export type TranslateProgress = (stage: string, progress: number) => void;

/**
 * @gltf-transform, loaded on first use: the API host's file analysis needs only the parsers of this
 * package, and loading glTF-Transform would cost each of its worker threads a quarter second.
 */
function gltf() {
  return {
    ...(require('@gltf-transform/core') as typeof import('@gltf-transform/core')),
    ...(require('@gltf-transform/extensions') as typeof import('@gltf-transform/extensions')),
    ...(require('@gltf-transform/functions') as typeof import('@gltf-transform/functions')),
  };
}

/** Flat (per-facet) normals of a triangle soup, so a viewer shades CAD edges sharp. */
function facetNormals(positions: Float32Array): Float32Array {
  const normals = new Float32Array(positions.length);
  for (let i = 0; i < positions.length; i += 9) {
    const ux = positions[i + 3] - positions[i];
    const uy = positions[i + 4] - positions[i + 1];
    const uz = positions[i + 5] - positions[i + 2];
    const vx = positions[i + 6] - positions[i];
    const vy = positions[i + 7] - positions[i + 1];
    const vz = positions[i + 8] - positions[i + 2];
    let nx = uy * vz - uz * vy;
    let ny = uz * vx - ux * vz;
    let nz = ux * vy - uy * vx;
    const length = Math.hypot(nx, ny, nz);
    if (length > 0) {
      nx /= length;
      ny /= length;
      nz /= length;
    } else {
      nx = 0;
      ny = 0;
      nz = 1;
    }
    for (let k = 0; k < 9; k += 3) {
      normals[i + k] = nx;
      normals[i + k + 1] = ny;
      normals[i + k + 2] = nz;
    }
  }
  return normals;
}

function addMesh(
  doc: Document,
  buffer: GltfBuffer,
  name: string,
  mesh: {
    positions: Float32Array;
    normals: Float32Array | null;
    indices: Uint32Array | null;
    color: [number, number, number] | null;
  },
): void {
  const primitive: Primitive = doc
    .createPrimitive()
    .setAttribute(
      'POSITION',
      doc.createAccessor().setType('VEC3').setArray(mesh.positions).setBuffer(buffer),
    );
  if (mesh.normals)
    primitive.setAttribute(
      'NORMAL',
      doc.createAccessor().setType('VEC3').setArray(mesh.normals).setBuffer(buffer),
    );
  if (mesh.indices)
    primitive.setIndices(doc.createAccessor().setType('SCALAR').setArray(mesh.indices).setBuffer(buffer));
  const [r, g, b] = mesh.color ?? [0.72, 0.74, 0.78];
  primitive.setMaterial(
    doc
      .createMaterial(`${name} material`)
      .setBaseColorFactor([r, g, b, 1])
      .setMetallicFactor(0.1)
      .setRoughnessFactor(0.6),
  );
  const node = doc.createNode(name).setMesh(doc.createMesh(name).addPrimitive(primitive));
  doc.getRoot().getDefaultScene()?.addChild(node);
}

async function documentOf(
  io: WebIO,
  data: Uint8Array,
  format: ModelFormat,
  name: string,
  progress: TranslateProgress,
): Promise<Document> {
  if (format === 'glb' || format === 'gltf') {
    try {
      if (format === 'glb') return await io.readBinary(data);
      const json = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
      return await io.readJSON({ json, resources: {} });
    } catch (error) {
      throw new MeshParseError(
        `not a readable ${format === 'glb' ? 'GLB' : 'glTF (with embedded buffers)'} file: ${(error as Error).message}`,
      );
    }
  }
  const { Document, weld } = gltf();
  const doc = new Document();
  const buffer = doc.createBuffer();
  doc.getRoot().setDefaultScene(doc.createScene(name));
  if (format === 'step' || format === 'iges') {
    const meshes = await readBrep(data, format);
    if (meshes === null)
      throw new MeshParseError(`OpenCascade cannot read this ${format.toUpperCase()} file`);
    if (meshes.length === 0)
      throw new MeshParseError(`the ${format.toUpperCase()} file holds no geometry to show`);
    progress('meshing', 50);
    for (const mesh of meshes) addMesh(doc, buffer, mesh.name, mesh);
    return doc;
  }
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const parsed = format === 'stl' ? parseStl(bytes) : parseObj(bytes);
  if (parsed.triangles === 0) throw new MeshParseError(`the ${format.toUpperCase()} file has no triangles`);
  progress('meshing', 40);
  addMesh(doc, buffer, name, {
    positions: parsed.positions,
    normals: facetNormals(parsed.positions),
    indices: null,
    color: null,
  });
  // Index the triangle soup: vertices equal in position and facet normal become one.
  await doc.transform(weld());
  return doc;
}

/**
 * A CAD or mesh file as one GLB for a web viewer: STL and OBJ (welded, flat normals), glTF/GLB
 * (re-packed), STEP and IGES (tessellated by OpenCascade, a mesh a body). Optionally simplified and
 * meshopt-compressed. A file that cannot be read throws MeshParseError, with the reason.
 */
export async function translateModel(
  data: Uint8Array,
  format: ModelFormat,
  options: TranslateOptions = {},
  progress: TranslateProgress = () => {},
  name = 'model',
): Promise<TranslatedModel> {
  const { WebIO, EXTMeshoptCompression, dedup, prune, simplify, weld } = gltf();
  // WebIO: everything is in memory (no file paths), and it loads no Node modules lazily.
  const io = new WebIO().registerExtensions([EXTMeshoptCompression]);
  progress('reading', 5);
  const doc = await documentOf(io, data, format, name, progress);
  progress('optimizing', 70);
  await doc.transform(dedup(), prune());
  if (options.simplify !== undefined || options.compress) {
    // meshoptimizer is an ES module (WebAssembly inside): loaded only when asked for.
    const { MeshoptEncoder, MeshoptSimplifier } = await import('meshoptimizer');
    if (options.simplify !== undefined) {
      await MeshoptSimplifier.ready;
      await doc.transform(
        weld(),
        simplify({ simplifier: MeshoptSimplifier, ratio: options.simplify, error: 0.001 }),
      );
    }
    if (options.compress) {
      await MeshoptEncoder.ready;
      io.registerDependencies({ 'meshopt.encoder': MeshoptEncoder });
      doc
        .createExtension(EXTMeshoptCompression)
        .setRequired(true)
        .setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.QUANTIZE });
    }
  }
  const stats = measure(doc);
  if (stats.vertices === 0) throw new MeshParseError('the model has no vertices to show');
  progress('writing', 85);
  const glb = await io.writeBinary(doc);
  return { glb, ...stats };
}

/** Meshes, vertices, triangles and bounds of a document's default scene. */
export function measure(doc: Document): Omit<TranslatedModel, 'glb'> {
  let vertices = 0;
  let triangles = 0;
  const meshes = doc.getRoot().listMeshes();
  for (const mesh of meshes) {
    for (const primitive of mesh.listPrimitives()) {
      const count = primitive.getAttribute('POSITION')?.getCount() ?? 0;
      vertices += count;
      triangles += (primitive.getIndices()?.getCount() ?? count) / 3;
    }
  }
  const scene = doc.getRoot().getDefaultScene() ?? doc.getRoot().listScenes()[0];
  const box = scene ? gltf().getBounds(scene) : null;
  return {
    meshes: meshes.length,
    vertices,
    triangles: Math.round(triangles),
    bounds:
      box?.min.every(Number.isFinite) === true
        ? { min: box.min as [number, number, number], max: box.max as [number, number, number] }
        : { min: [0, 0, 0], max: [0, 0, 0] },
  };
}

/** A GLB read back (uncompressed): its measure, as a viewer would load it. */
export async function readGlb(glb: Uint8Array): Promise<Omit<TranslatedModel, 'glb'>> {
  const { WebIO } = gltf();
  return measure(await new WebIO().readBinary(glb));
}
