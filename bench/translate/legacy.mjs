// The translation pipeline of @hwp/geometry before issue 37, kept as the same-run baseline of the
// quality figures: flat (per-facet) normals, glTF-Transform's weld on position and normal, its
// simplify bounded at 0.1% error, and EXT_meshopt_compression set on unquantized buffers.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { root } from '../lib/collab.mjs';

const geometryRequire = createRequire(join(root, 'packages/geometry/package.json'));
const geometry = geometryRequire(join(root, 'packages/geometry/dist/index.js'));
const core = geometryRequire('@gltf-transform/core');
const { EXTMeshoptCompression } = geometryRequire('@gltf-transform/extensions');
const { dedup, prune, simplify, weld } = geometryRequire('@gltf-transform/functions');
const { MeshoptEncoder, MeshoptSimplifier } = geometryRequire('meshoptimizer');

function facetNormals(positions) {
  const normals = new Float32Array(positions.length);
  for (let i = 0; i < positions.length; i += 9) {
    const u = [0, 1, 2].map((k) => positions[i + 3 + k] - positions[i + k]);
    const v = [0, 1, 2].map((k) => positions[i + 6 + k] - positions[i + k]);
    let n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    const length = Math.hypot(...n);
    n = length > 0 ? n.map((c) => c / length) : [0, 0, 1];
    for (let k = 0; k < 9; k += 3) normals.set(n, i + k);
  }
  return normals;
}

function addMesh(doc, buffer, name, mesh) {
  const accessor = (type, array) => doc.createAccessor().setType(type).setArray(array).setBuffer(buffer);
  const primitive = doc.createPrimitive().setAttribute('POSITION', accessor('VEC3', mesh.positions));
  if (mesh.normals) primitive.setAttribute('NORMAL', accessor('VEC3', mesh.normals));
  if (mesh.indices) primitive.setIndices(accessor('SCALAR', mesh.indices));
  doc
    .getRoot()
    .getDefaultScene()
    .addChild(doc.createNode(name).setMesh(doc.createMesh(name).addPrimitive(primitive)));
}

/** The old translateModel for STL and STEP: `{ glb, triangles, vertices }`. */
export async function legacyTranslate(data, format, options = {}) {
  const doc = new core.Document();
  const buffer = doc.createBuffer();
  doc.getRoot().setDefaultScene(doc.createScene('model'));
  if (format === 'step') {
    for (const mesh of await geometry.readBrep(data, 'step')) addMesh(doc, buffer, mesh.name, mesh);
  } else {
    const parsed = geometry.parseStl(data);
    addMesh(doc, buffer, 'model', { positions: parsed.positions, normals: facetNormals(parsed.positions) });
    await doc.transform(weld());
  }
  const io = new core.WebIO().registerExtensions([EXTMeshoptCompression]);
  await doc.transform(dedup(), prune());
  await MeshoptSimplifier.ready;
  await MeshoptEncoder.ready;
  if (options.simplify !== undefined)
    await doc.transform(
      weld(),
      simplify({ simplifier: MeshoptSimplifier, ratio: options.simplify, error: 0.001 }),
    );
  if (options.compress) {
    io.registerDependencies({ 'meshopt.encoder': MeshoptEncoder });
    doc
      .createExtension(EXTMeshoptCompression)
      .setRequired(true)
      .setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.QUANTIZE });
  }
  const { triangles, vertices } = geometry.measure(doc);
  return { glb: await io.writeBinary(doc), triangles, vertices };
}
