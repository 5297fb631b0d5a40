import { coverage, renderMesh } from './mesh-render';

/** The 12 triangles of an axis-aligned box from the origin to (dx, dy, dz). */
export function boxTriangles(dx: number, dy: number, dz: number): Float32Array {
  const v = (i: number) => [i & 1 ? dx : 0, i & 2 ? dy : 0, i & 4 ? dz : 0];
  const quads = [
    [0, 1, 3, 2],
    [4, 6, 7, 5],
    [0, 4, 5, 1],
    [2, 3, 7, 6],
    [0, 2, 6, 4],
    [1, 5, 7, 3],
  ];
  const out: number[] = [];
  for (const [a, b, c, d] of quads) out.push(...v(a), ...v(b), ...v(c), ...v(a), ...v(c), ...v(d));
  return new Float32Array(out);
}

describe('renderMesh', () => {
  test('a box covers a good part of the image with at least three shades (three visible faces)', () => {
    const image = renderMesh(boxTriangles(10, 20, 30), 128, 128);
    expect(coverage(image)).toBeGreaterThan(0.2);
    const shades = new Set<string>();
    for (let i = 0; i < 128 * 128; i++) shades.add(image.pixels.slice(i * 3, i * 3 + 3).join(','));
    expect(shades.size).toBeGreaterThanOrEqual(4);
  });

  test('an empty or flat-to-a-point mesh renders the background only', () => {
    expect(coverage(renderMesh(new Float32Array(0), 32, 32))).toBe(0);
    expect(coverage(renderMesh(new Float32Array(9), 32, 32))).toBe(0);
  });
});
