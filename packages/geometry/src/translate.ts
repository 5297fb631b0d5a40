import type { Document, Buffer as GltfBuffer, Primitive, WebIO } from '@gltf-transform/core';
import { readBrep } from './brep';
import {
  creaseNormals,
  largestExtent,
  meshoptimizer,
  SIMPLIFY_ERROR,
  simplifyWelded,
  weldByPosition,
} from './indexed-mesh';
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
  /**
   * Keep about this share (0-1, exclusive) of the triangles, through meshoptimizer's simplifier on
   * the mesh welded by position (a STEP/IGES assembly mesh by mesh), within an error of 1% of the
   * model's largest extent.
   */
  simplify?: number;
  /** Write EXT_meshopt_compression: reordered, quantized (KHR_mesh_quantization), meshopt-encoded. */
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

function addMesh(
  doc: Document,
  buffer: GltfBuffer,
  name: string,
  mesh: {
    positions: Float32Array;
    normals: Float32Array | null;
    indices: Uint32Array;
    color: [number, number, number] | null;
  },
): void {
  if (mesh.indices.length === 0) return;
  // 16-bit indices where they reach: half the index buffer of most parts.
  const indices = mesh.positions.length / 3 <= 0xffff ? Uint16Array.from(mesh.indices) : mesh.indices;
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
  primitive.setIndices(doc.createAccessor().setType('SCALAR').setArray(indices).setBuffer(buffer));
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
  ratio: number | undefined,
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
  const { Document } = gltf();
  const doc = new Document();
  const buffer = doc.createBuffer();
  doc.getRoot().setDefaultScene(doc.createScene(name));
  const { MeshoptSimplifier } = await meshoptimizer();
  if (format === 'step' || format === 'iges') {
    const meshes = await readBrep(data, format);
    if (meshes === null)
      throw new MeshParseError(`OpenCascade cannot read this ${format.toUpperCase()} file`);
    if (meshes.length === 0)
      throw new MeshParseError(`the ${format.toUpperCase()} file holds no geometry to show`);
    progress('meshing', 50);
    // Unsimplified, OpenCascade's mesh stands: its normals are the surfaces' own, split by B-rep face.
    if (ratio === undefined) {
      for (const mesh of meshes) addMesh(doc, buffer, mesh.name, mesh);
      return doc;
    }
    // Each body welded and simplified on its own, all within one error bound (the assembly's scale).
    const welded = meshes.map((mesh) => weldByPosition(MeshoptSimplifier, mesh.positions, mesh.indices));
    const error = SIMPLIFY_ERROR * largestExtent(welded);
    welded.forEach((mesh, i) => {
      const simplified = simplifyWelded(MeshoptSimplifier, mesh, ratio, error);
      addMesh(doc, buffer, meshes[i].name, { ...creaseNormals(simplified), color: meshes[i].color });
    });
    return doc;
  }
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const parsed = format === 'stl' ? parseStl(bytes) : parseObj(bytes);
  if (parsed.triangles === 0) throw new MeshParseError(`the ${format.toUpperCase()} file has no triangles`);
  progress('meshing', 40);
  // A triangle soup indexed by position, so neighbouring facets share vertices: normals are split
  // again only along sharp edges.
  let mesh = weldByPosition(MeshoptSimplifier, parsed.positions, null);
  if (ratio !== undefined)
    mesh = simplifyWelded(MeshoptSimplifier, mesh, ratio, SIMPLIFY_ERROR * largestExtent([mesh]));
  addMesh(doc, buffer, name, { ...creaseNormals(mesh), color: null });
  return doc;
}

/**
 * A CAD or mesh file as one GLB for a web viewer: STL and OBJ (welded by position, normals smooth
 * below a crease angle and sharp above), glTF/GLB (re-packed), STEP and IGES (tessellated by
 * OpenCascade, a mesh a body). Optionally simplified and meshopt-compressed. A file that cannot be
 * read throws MeshParseError, with the reason.
 */
export async function translateModel(
  data: Uint8Array,
  format: ModelFormat,
  options: TranslateOptions = {},
  progress: TranslateProgress = () => {},
  name = 'model',
): Promise<TranslatedModel> {
  const { WebIO, Logger, EXTMeshoptCompression, KHRMeshQuantization, dedup, meshopt, prune, simplify, weld } =
    gltf();
  // WebIO: everything is in memory (no file paths), and it loads no Node modules lazily. Quantized
  // attributes (compress) are valid glTF only under KHR_mesh_quantization.
  const io = new WebIO().registerExtensions([EXTMeshoptCompression, KHRMeshQuantization]);
  progress('reading', 5);
  const doc = await documentOf(io, data, format, name, options.simplify, progress);
  // glTF-Transform's transforms report each step at INFO on the console: a worker's log wants warnings.
  doc.setLogger(new Logger(Logger.Verbosity.WARN));
  progress('optimizing', 70);
  await doc.transform(dedup(), prune());
  if ((format === 'glb' || format === 'gltf') && options.simplify !== undefined) {
    const { MeshoptSimplifier } = await meshoptimizer();
    await doc.transform(
      weld(),
      simplify({ simplifier: MeshoptSimplifier, ratio: options.simplify, error: SIMPLIFY_ERROR }),
    );
  }
  if (options.compress) {
    // glTF-Transform's meshopt: vertex cache order, quantized attributes, then the encoder on write.
    const { MeshoptEncoder } = await meshoptimizer();
    io.registerDependencies({ 'meshopt.encoder': MeshoptEncoder });
    await doc.transform(meshopt({ encoder: MeshoptEncoder }));
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
