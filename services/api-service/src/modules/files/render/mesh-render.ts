/** An RGB image, row by row, 3 bytes a pixel. */
export interface RasterImage {
  width: number;
  height: number;
  pixels: Uint8Array;
}

const BACKGROUND = [244, 245, 247];
const BASE = [96, 135, 186];
/** Light from the viewer's upper left; both faces are lit (meshes are often not closed or oriented). */
const LIGHT = normalize([-0.4, 0.6, 0.7]);

function normalize(v: number[]): number[] {
  const length = Math.hypot(v[0], v[1], v[2]) || 1;
  return [v[0] / length, v[1] / length, v[2] / length];
}

/**
 * Renders a triangle soup (9 floats a triangle) to a shaded image on the CPU: an isometric view
 * (rotated 45 degrees about the vertical axis, then 35.26 degrees down), fitted to the image with a
 * margin, a z-buffer for hidden surfaces and Lambert shading per face. No GPU, no browser.
 */
export function renderMesh(positions: Float32Array, width: number, height: number): RasterImage {
  const pixels = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) pixels.set(BACKGROUND, i * 3);
  const count = Math.floor(positions.length / 9);
  if (count === 0) return { width, height, pixels };

  // View rotation: yaw 45 degrees, then pitch atan(1/sqrt 2) (the isometric angles).
  const yaw = Math.PI / 4;
  const pitch = Math.atan(1 / Math.SQRT2);
  const [cy, sy, cp, sp] = [Math.cos(yaw), Math.sin(yaw), Math.cos(pitch), Math.sin(pitch)];
  // Model Z is "up" in most CAD formats: map it to screen up.
  const view = new Float32Array(positions.length);
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < positions.length; i += 3) {
    const [x, y, z] = [positions[i], positions[i + 1], positions[i + 2]];
    const rx = x * cy - y * sy;
    const ry = x * sy + y * cy;
    const vx = rx;
    const vy = z * cp - ry * sp;
    const vz = z * sp + ry * cp;
    view[i] = vx;
    view[i + 1] = vy;
    view[i + 2] = vz;
    if (vx < minX) minX = vx;
    if (vx > maxX) maxX = vx;
    if (vy < minY) minY = vy;
    if (vy > maxY) maxY = vy;
  }
  const margin = 0.08;
  const span = Math.max(maxX - minX, maxY - minY) || 1;
  const scale = (Math.min(width, height) * (1 - 2 * margin)) / span;
  const offsetX = width / 2 - ((minX + maxX) / 2) * scale;
  const offsetY = height / 2 + ((minY + maxY) / 2) * scale;

  const depth = new Float32Array(width * height).fill(-Infinity);
  const sx = new Float64Array(3);
  const syy = new Float64Array(3);
  const sz = new Float64Array(3);
  for (let t = 0; t < count; t++) {
    const o = t * 9;
    for (let k = 0; k < 3; k++) {
      sx[k] = view[o + k * 3] * scale + offsetX;
      syy[k] = offsetY - view[o + k * 3 + 1] * scale;
      sz[k] = view[o + k * 3 + 2];
    }
    // Face normal in view space, for the shade.
    const ux = view[o + 3] - view[o];
    const uy = view[o + 4] - view[o + 1];
    const uz = view[o + 5] - view[o + 2];
    const wx = view[o + 6] - view[o];
    const wy = view[o + 7] - view[o + 1];
    const wz = view[o + 8] - view[o + 2];
    const n = normalize([uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx]);
    const lambert = Math.abs(n[0] * LIGHT[0] + n[1] * LIGHT[1] + n[2] * LIGHT[2]);
    const shade = 0.35 + 0.65 * lambert;
    const r = Math.min(255, Math.round(BASE[0] * shade + 40 * lambert));
    const g = Math.min(255, Math.round(BASE[1] * shade + 40 * lambert));
    const b = Math.min(255, Math.round(BASE[2] * shade + 40 * lambert));

    const area = (sx[1] - sx[0]) * (syy[2] - syy[0]) - (syy[1] - syy[0]) * (sx[2] - sx[0]);
    if (Math.abs(area) < 1e-12) continue;
    const x0 = Math.max(0, Math.floor(Math.min(sx[0], sx[1], sx[2])));
    const x1 = Math.min(width - 1, Math.ceil(Math.max(sx[0], sx[1], sx[2])));
    const y0 = Math.max(0, Math.floor(Math.min(syy[0], syy[1], syy[2])));
    const y1 = Math.min(height - 1, Math.ceil(Math.max(syy[0], syy[1], syy[2])));
    for (let py = y0; py <= y1; py++) {
      const cyp = py + 0.5;
      for (let px = x0; px <= x1; px++) {
        const cxp = px + 0.5;
        const w0 = ((sx[1] - cxp) * (syy[2] - cyp) - (syy[1] - cyp) * (sx[2] - cxp)) / area;
        const w1 = ((sx[2] - cxp) * (syy[0] - cyp) - (syy[2] - cyp) * (sx[0] - cxp)) / area;
        const w2 = 1 - w0 - w1;
        if (w0 < 0 || w1 < 0 || w2 < 0) continue;
        const z = w0 * sz[0] + w1 * sz[1] + w2 * sz[2];
        const at = py * width + px;
        if (z <= depth[at]) continue;
        depth[at] = z;
        pixels[at * 3] = r;
        pixels[at * 3 + 1] = g;
        pixels[at * 3 + 2] = b;
      }
    }
  }
  return { width, height, pixels };
}

/** Share of pixels that differ from the background (a blank render is 0). */
export function coverage(image: RasterImage): number {
  let drawn = 0;
  for (let i = 0; i < image.width * image.height; i++) {
    const o = i * 3;
    if (
      image.pixels[o] !== BACKGROUND[0] ||
      image.pixels[o + 1] !== BACKGROUND[1] ||
      image.pixels[o + 2] !== BACKGROUND[2]
    )
      drawn++;
  }
  return drawn / (image.width * image.height);
}
