/** Facts about a triangle mesh, and the triangles themselves (9 floats a triangle) for a preview. */
export interface MeshStats {
  format: 'stl-binary' | 'stl-ascii' | 'obj' | 'step' | 'iges';
  triangles: number;
  vertices: number;
  components: number;
  bbox: { min: [number, number, number]; max: [number, number, number] } | null;
  positions: Float32Array;
}

export class MeshParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MeshParseError';
  }
}

function bounds(positions: Float32Array): MeshStats['bbox'] {
  if (positions.length === 0) return null;
  const min: [number, number, number] = [Infinity, Infinity, Infinity];
  const max: [number, number, number] = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < positions.length; i += 3) {
    for (let k = 0; k < 3; k++) {
      const v = positions[i + k];
      if (v < min[k]) min[k] = v;
      if (v > max[k]) max[k] = v;
    }
  }
  return { min, max };
}

function finite(value: number, where: string): number {
  if (!Number.isFinite(value)) throw new MeshParseError(`${where}: a coordinate is not a finite number`);
  return value;
}

/**
 * STL, binary or ASCII. Binary is decided by its size equation (84 + 50 per triangle), since binary
 * headers often start with `solid` too.
 */
export function parseStl(data: Buffer): MeshStats {
  if (data.length >= 84) {
    const count = data.readUInt32LE(80);
    if (84 + count * 50 === data.length) {
      const positions = new Float32Array(count * 9);
      for (let t = 0; t < count; t++) {
        const at = 84 + t * 50 + 12;
        for (let k = 0; k < 9; k++)
          positions[t * 9 + k] = finite(data.readFloatLE(at + k * 4), `triangle ${t + 1}`);
      }
      return {
        format: 'stl-binary',
        triangles: count,
        vertices: count * 3,
        components: 1,
        bbox: bounds(positions),
        positions,
      };
    }
  }
  const text = data.toString('latin1');
  if (!/^\s*solid\b/i.test(text)) {
    throw new MeshParseError(
      data.length >= 84
        ? 'not an STL file: the binary size does not match its triangle count'
        : 'not an STL file',
    );
  }
  const coords: number[] = [];
  let solids = 0;
  const vertex = /^\s*vertex\s+(\S+)\s+(\S+)\s+(\S+)/;
  for (const line of text.split(/\r?\n/)) {
    const match = vertex.exec(line);
    if (match) {
      coords.push(
        finite(Number(match[1]), 'vertex'),
        finite(Number(match[2]), 'vertex'),
        finite(Number(match[3]), 'vertex'),
      );
    } else if (/^\s*solid\b/i.test(line)) solids++;
  }
  if (coords.length % 9 !== 0) throw new MeshParseError('ASCII STL: a facet does not have three vertices');
  const positions = new Float32Array(coords);
  const triangles = positions.length / 9;
  return {
    format: 'stl-ascii',
    triangles,
    vertices: triangles * 3,
    components: Math.max(solids, 1),
    bbox: bounds(positions),
    positions,
  };
}

/** Wavefront OBJ: `v` positions and `f` faces (negative and `v/vt/vn` indices); `o`/`g` name components. */
export function parseObj(data: Buffer): MeshStats {
  const vertices: number[] = [];
  const triangles: number[] = [];
  const objects = new Set<string>();
  const groups = new Set<string>();
  const lines = data.toString('utf8').split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line.startsWith('v ')) {
      const parts = line.split(/\s+/);
      for (let k = 1; k <= 3; k++) vertices.push(finite(Number(parts[k]), `line ${index + 1}`));
    } else if (line.startsWith('f ')) {
      const count = vertices.length / 3;
      const ids = line
        .split(/\s+/)
        .slice(1)
        .map((ref) => {
          const n = Number.parseInt(ref.split('/')[0], 10);
          const id = n < 0 ? count + n : n - 1;
          if (!Number.isInteger(n) || n === 0 || id < 0 || id >= count) {
            throw new MeshParseError(`line ${index + 1}: face refers to vertex ${ref}, which does not exist`);
          }
          return id;
        });
      if (ids.length < 3) throw new MeshParseError(`line ${index + 1}: a face needs three vertices`);
      for (let k = 1; k + 1 < ids.length; k++) triangles.push(ids[0], ids[k], ids[k + 1]);
    } else if (line.startsWith('o ')) objects.add(line.slice(2).trim());
    else if (line.startsWith('g ')) groups.add(line.slice(2).trim());
  }
  const positions = new Float32Array(triangles.length * 3);
  for (let i = 0; i < triangles.length; i++) {
    const id = triangles[i];
    positions.set(vertices.slice(id * 3, id * 3 + 3), i * 3);
  }
  return {
    format: 'obj',
    triangles: triangles.length / 3,
    vertices: vertices.length / 3,
    components: Math.max(objects.size || groups.size, 1),
    bbox: bounds(new Float32Array(vertices)),
    positions,
  };
}
