import { boxTriangles } from '@hwp/geometry/test-kit';
import { coverage, renderMesh } from './mesh-render';

const box = (dx: number, dy: number, dz: number) => new Float32Array(boxTriangles(dx, dy, dz).flat());

describe('renderMesh', () => {
  test('a box covers a good part of the image with at least three shades (three visible faces)', () => {
    const image = renderMesh(box(10, 20, 30), 128, 128);
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
