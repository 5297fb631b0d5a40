import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Meshes and a STEP file of known geometry, made in code: the geometry, processing and viewer tests. */

/** The 12 triangles of a box from (x0, y0, z0) of size dx x dy x dz. */
export function boxTriangles(
  dx: number,
  dy: number,
  dz: number,
  at: [number, number, number] = [0, 0, 0],
): number[][] {
  const v = (i: number) => [at[0] + (i & 1 ? dx : 0), at[1] + (i & 2 ? dy : 0), at[2] + (i & 4 ? dz : 0)];
  const quads = [
    [0, 2, 3, 1],
    [4, 5, 7, 6],
    [0, 1, 5, 4],
    [2, 6, 7, 3],
    [0, 4, 6, 2],
    [1, 3, 7, 5],
  ];
  const out: number[][] = [];
  for (const [a, b, c, d] of quads) out.push([...v(a), ...v(b), ...v(c)], [...v(a), ...v(c), ...v(d)]);
  return out;
}

/** A binary STL of a box (12 triangles), header starting with `solid` as many exporters write. */
export function binaryStlBox(
  dx: number,
  dy: number,
  dz: number,
  at: [number, number, number] = [0, 0, 0],
): Buffer {
  return binaryStl(boxTriangles(dx, dy, dz, at), 'solid box exported as binary');
}

/** The binary STL of `triangles` (9 numbers each): an 80-byte header, the count, 50 bytes a triangle. */
export function binaryStl(triangles: number[][], header = ''): Buffer {
  const out = Buffer.alloc(84 + triangles.length * 50);
  out.write(header, 0, 'latin1');
  out.writeUInt32LE(triangles.length, 80);
  triangles.forEach((t, i) => {
    for (let k = 0; k < 9; k++) out.writeFloatLE(t[k], 84 + i * 50 + 12 + k * 4);
  });
  return out;
}

export function asciiStlBox(dx: number, dy: number, dz: number): string {
  const facets = boxTriangles(dx, dy, dz).map(
    (t) =>
      `  facet normal 0 0 0\n    outer loop\n${[0, 3, 6].map((k) => `      vertex ${t[k]} ${t[k + 1]} ${t[k + 2]}`).join('\n')}\n    endloop\n  endfacet`,
  );
  return `solid box\n${facets.join('\n')}\nendsolid box\n`;
}

/** Two cubes as OBJ objects: one 0..2 on each axis, one 5..6 (so the whole is 6 x 6 x 6). */
export function objTwoCubes(): string {
  const cube = (o: number, s: number, base: number) => {
    const v: string[] = [];
    for (let i = 0; i < 8; i++)
      v.push(`v ${o + (i & 1 ? s : 0)} ${o + (i & 2 ? s : 0)} ${o + (i & 4 ? s : 0)}`);
    const f = [
      [1, 3, 4, 2],
      [5, 6, 8, 7],
      [1, 2, 6, 5],
      [3, 7, 8, 4],
      [1, 5, 7, 3],
      [2, 4, 8, 6],
    ].map((q) => `f ${q.map((n) => `${n + base}/${n + base}/1`).join(' ')}`);
    return [...v, ...f];
  };
  return ['# two cubes', 'o first', ...cube(0, 2, 0), 'o second', ...cube(5, 1, 8), ''].join('\n');
}

/**
 * A real STEP file with B-rep geometry: the 10 mm cube Autodesk Inventor 2019 exported, shipped with
 * occt-import-js's own tests (read from the installed package, not copied here).
 */
export function inventorCubeStep(): Buffer {
  const packageJson = require.resolve('occt-import-js/package.json', {
    paths: [join(__dirname, '..', '..')],
  });
  return readFileSync(join(dirname(packageJson), 'test/testfiles/cube-10x10mm/Cube 10x10.stp'));
}
