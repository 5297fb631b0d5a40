/** meshoptimizer's exports: an ES module, typed from this CommonJS package as it is imported. */
type Meshopt = typeof import('meshoptimizer', { with: { 'resolution-mode': 'import' }});
type Simplifier = Meshopt['MeshoptSimplifier'];

/** Indexed triangles: 3 floats a vertex, 3 indices a triangle. */
export interface IndexedMesh {
  positions: Float32Array;
  indices: Uint32Array;
}

/** An indexed mesh with a normal a vertex, ready for a glTF primitive. */
export interface ShadedMesh extends IndexedMesh {
  normals: Float32Array;
}

/**
 * Faces that meet at less than this angle are shaded smooth, sharper edges stay sharp. Above
 * OpenCascade's default angular deflection (0.5 rad, 28.6°), so a tessellated cylinder reads as
 * round; below 45°, so a chamfer keeps its edges.
 */
export const CREASE_DEGREES = 40;

/**
 * The simplifier's error bound, as a share of the model's largest extent: gltfpack's default (1%).
 * A model that cannot reach the asked ratio within it stops short rather than losing its shape.
 */
export const SIMPLIFY_ERROR = 0.01;

const UNUSED = 0xffffffff;

/**
 * meshoptimizer (MIT), loaded on first use: an ES module that Node >= 20.19 requires natively, its
 * WebAssembly instantiated once per thread.
 */
export async function meshoptimizer(): Promise<Meshopt> {
  const lib = require('meshoptimizer') as Meshopt;
  await Promise.all([lib.MeshoptSimplifier.ready, lib.MeshoptEncoder.ready]);
  return lib;
}

/**
 * Vertices equal in position become one (meshoptimizer's position remap), and triangles that
 * collapse to a line or a point are dropped: the simplifier needs one vertex a position, else every
 * facet edge is a seam it will not collapse. `indices` null reads `positions` as a triangle soup.
 */
export function weldByPosition(
  simplifier: Simplifier,
  positions: Float32Array,
  indices: Uint32Array | null,
): IndexedMesh {
  const remap = simplifier.generatePositionRemap(positions, 3);
  const source = indices ?? new Uint32Array(positions.length / 3).map((_, i) => i);
  const welded = new Uint32Array(source.length);
  let count = 0;
  for (let i = 0; i < source.length; i += 3) {
    const a = remap[source[i]];
    const b = remap[source[i + 1]];
    const c = remap[source[i + 2]];
    if (a === b || b === c || a === c) continue;
    welded[count++] = a;
    welded[count++] = b;
    welded[count++] = c;
  }
  return compact(simplifier, positions, welded.slice(0, count));
}

/** Only the vertices `indices` use, in the order they are first used (indices rewritten to match). */
function compact(simplifier: Simplifier, positions: Float32Array, indices: Uint32Array): IndexedMesh {
  if (indices.length === 0) return { positions: new Float32Array(0), indices };
  const [remap, unique] = simplifier.compactMesh(indices);
  const out = new Float32Array(unique * 3);
  for (let v = 0; v < remap.length; v++) {
    const to = remap[v];
    if (to === UNUSED) continue;
    out[to * 3] = positions[v * 3];
    out[to * 3 + 1] = positions[v * 3 + 1];
    out[to * 3 + 2] = positions[v * 3 + 2];
  }
  return { positions: out, indices };
}

/** The vertices at each axis's minimum and maximum (one each), locked so the bounds survive. */
function extremeVertices(positions: Float32Array): Uint8Array {
  const lock = new Uint8Array(positions.length / 3);
  for (let k = 0; k < 3; k++) {
    let low = 0;
    let high = 0;
    for (let v = 0; v < lock.length; v++) {
      if (positions[v * 3 + k] < positions[low * 3 + k]) low = v;
      if (positions[v * 3 + k] > positions[high * 3 + k]) high = v;
    }
    lock[low] = 1;
    lock[high] = 1;
  }
  return lock;
}

/**
 * About `ratio` of a position-welded mesh's triangles, within `error` (absolute, model units):
 * meshoptimizer's edge-collapse simplifier, the vertices that hold the bounds locked.
 */
export function simplifyWelded(
  simplifier: Simplifier,
  mesh: IndexedMesh,
  ratio: number,
  error: number,
): IndexedMesh {
  const target = Math.floor((mesh.indices.length / 3) * ratio) * 3;
  if (mesh.indices.length === 0 || target >= mesh.indices.length) return mesh;
  const [indices] = simplifier.simplifyWithAttributes(
    mesh.indices,
    mesh.positions,
    3,
    new Float32Array(0),
    0,
    [],
    extremeVertices(mesh.positions),
    target,
    error,
    ['ErrorAbsolute'],
  );
  return compact(simplifier, mesh.positions, indices);
}

/** The largest extent of some meshes together: the scale of the simplifier's error bound. */
export function largestExtent(meshes: { positions: Float32Array }[]): number {
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  for (const { positions } of meshes) {
    for (let i = 0; i < positions.length; i++) {
      const k = i % 3;
      if (positions[i] < min[k]) min[k] = positions[i];
      if (positions[i] > max[k]) max[k] = positions[i];
    }
  }
  const extent = Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2]);
  return Number.isFinite(extent) ? extent : 0;
}

/** Unit normals of the triangles (zero for a degenerate one) and the angle of each corner. */
function facesAndCorners(mesh: IndexedMesh): { faces: Float32Array; angles: Float32Array } {
  const { positions: p, indices } = mesh;
  const faces = new Float32Array(indices.length);
  const angles = new Float32Array(indices.length);
  const edge = new Float64Array(9);
  for (let t = 0; t < indices.length; t += 3) {
    for (let k = 0; k < 3; k++) {
      const from = indices[t + k] * 3;
      const to = indices[t + ((k + 1) % 3)] * 3;
      for (let c = 0; c < 3; c++) edge[k * 3 + c] = p[to + c] - p[from + c];
    }
    const nx = edge[1] * edge[5] - edge[2] * edge[4];
    const ny = edge[2] * edge[3] - edge[0] * edge[5];
    const nz = edge[0] * edge[4] - edge[1] * edge[3];
    const length = Math.hypot(nx, ny, nz);
    if (length > 0) {
      faces[t] = nx / length;
      faces[t + 1] = ny / length;
      faces[t + 2] = nz / length;
    }
    // The corner at vertex k lies between the edge into it (k-1 -> k) and the edge out of it (k -> k+1).
    for (let k = 0; k < 3; k++) {
      const i = ((k + 2) % 3) * 3;
      const o = k * 3;
      const dot = -(edge[i] * edge[o] + edge[i + 1] * edge[o + 1] + edge[i + 2] * edge[o + 2]);
      const norms =
        Math.hypot(edge[i], edge[i + 1], edge[i + 2]) * Math.hypot(edge[o], edge[o + 1], edge[o + 2]);
      angles[t + k] = norms > 0 ? Math.acos(Math.min(1, Math.max(-1, dot / norms))) : 0;
    }
  }
  return { faces, angles };
}

/**
 * Normals that shade curved surfaces smooth and CAD edges sharp: each corner's normal is the
 * angle-weighted mean of the faces around its vertex within `creaseDegrees` of its own face. A
 * vertex is split only where its corners' normals differ, that is along the sharp edges.
 */
export function creaseNormals(mesh: IndexedMesh, creaseDegrees = CREASE_DEGREES): ShadedMesh {
  const { positions, indices } = mesh;
  const vertexCount = positions.length / 3;
  const { faces, angles } = facesAndCorners(mesh);
  const cosCrease = Math.cos((creaseDegrees * Math.PI) / 180);
  // The corners around each vertex (compressed rows).
  const start = new Uint32Array(vertexCount + 1);
  for (const v of indices) start[v + 1]++;
  for (let v = 0; v < vertexCount; v++) start[v + 1] += start[v];
  const fill = start.slice(0, vertexCount);
  const around = new Uint32Array(indices.length);
  for (let c = 0; c < indices.length; c++) around[fill[indices[c]]++] = c;

  // At most a vertex a corner; cut to size at the end.
  const outPositions = new Float32Array(indices.length * 3);
  const outNormals = new Float32Array(indices.length * 3);
  const outIndices = new Uint32Array(indices.length);
  let made = 0;
  const normal = [0, 0, 0];
  for (let v = 0; v < vertexCount; v++) {
    const first = made;
    for (let r = start[v]; r < start[v + 1]; r++) {
      const c = around[r];
      const f = c - (c % 3);
      normal[0] = 0;
      normal[1] = 0;
      normal[2] = 0;
      for (let q = start[v]; q < start[v + 1]; q++) {
        const o = around[q];
        const g = o - (o % 3);
        const dot = faces[f] * faces[g] + faces[f + 1] * faces[g + 1] + faces[f + 2] * faces[g + 2];
        if (g !== f && dot < cosCrease) continue;
        normal[0] += faces[g] * angles[o];
        normal[1] += faces[g + 1] * angles[o];
        normal[2] += faces[g + 2] * angles[o];
      }
      let length = Math.hypot(normal[0], normal[1], normal[2]);
      if (length === 0) {
        // A degenerate face: it takes the vertex's first normal, or faces +z if it has none.
        if (made > first) {
          outIndices[c] = first;
          continue;
        }
        normal[2] = 1;
        length = 1;
      }
      const nx = normal[0] / length;
      const ny = normal[1] / length;
      const nz = normal[2] / length;
      // Corners whose normals agree (the same faces summed) share one vertex.
      let at = -1;
      for (let u = first; u < made; u++) {
        const same = outNormals[u * 3] * nx + outNormals[u * 3 + 1] * ny + outNormals[u * 3 + 2] * nz;
        if (same > 0.99999) {
          at = u;
          break;
        }
      }
      if (at < 0) {
        at = made++;
        for (let k = 0; k < 3; k++) outPositions[at * 3 + k] = positions[v * 3 + k];
        outNormals[at * 3] = nx;
        outNormals[at * 3 + 1] = ny;
        outNormals[at * 3 + 2] = nz;
      }
      outIndices[c] = at;
    }
  }
  return {
    positions: outPositions.slice(0, made * 3),
    normals: outNormals.slice(0, made * 3),
    indices: outIndices,
  };
}
