import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as CFB from 'cfb';

/** CAD files of known geometry, made in code, for the processing tests and the bench. */

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

/** A binary STL of about `bytes` bytes: many small boxes on a grid. */
export function binaryStlOfSize(bytes: number): Buffer {
  const boxes = Math.max(1, Math.floor((bytes - 84) / (12 * 50)));
  const side = Math.ceil(Math.sqrt(boxes));
  const triangles: number[][] = [];
  for (let i = 0; i < boxes; i++)
    triangles.push(...boxTriangles(1, 1, 1 + (i % 7), [(i % side) * 2, Math.floor(i / side) * 2, 0]));
  return binaryStl(triangles);
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

/** A STEP AP214 text: an assembly with two parts (3 PRODUCT, 2 NAUO), millimetres, from SolidWorks. */
export function stepAssembly(): string {
  return `ISO-10303-21;
HEADER;
FILE_DESCRIPTION(('SolidWorks 2022 Exported'),'2;1');
FILE_NAME('bracket-assy.STEP','2026-11-20T10:00:00',('Ada O''Neil'),('Acme'),
  'SwSTEP 2.0','SolidWorks 2022',' ');
FILE_SCHEMA(('AUTOMOTIVE_DESIGN { 1 0 10303 214 1 1 1 1 }'));
ENDSEC;
DATA;
#1=PRODUCT('ASSY','bracket-assy','',(#9));
#2=PRODUCT('P1','plate','',(#9));
#3=PRODUCT('P2','pin','',(#9));
#4=NEXT_ASSEMBLY_USAGE_OCCURRENCE('NAUO1','','',#10,#11,$);
#5=NEXT_ASSEMBLY_USAGE_OCCURRENCE('NAUO2','','',#10,#12,$);
#6=( LENGTH_UNIT() NAMED_UNIT(*) SI_UNIT(.MILLI.,.METRE.) );
#7=( NAMED_UNIT(*) PLANE_ANGLE_UNIT() SI_UNIT($,.RADIAN.) );
ENDSEC;
END-ISO-10303-21;
`;
}

/** A DXF drawing in millimetres, extents 0,0 to 100,50, two layers, three lines and a circle. */
export function dxfDrawing(): string {
  const pairs: [number, string | number][] = [
    [0, 'SECTION'],
    [2, 'HEADER'],
    [9, '$ACADVER'],
    [1, 'AC1015'],
    [9, '$INSUNITS'],
    [70, 4],
    [9, '$EXTMIN'],
    [10, 0],
    [20, 0],
    [30, 0],
    [9, '$EXTMAX'],
    [10, 100],
    [20, 50],
    [30, 0],
    [0, 'ENDSEC'],
    [0, 'SECTION'],
    [2, 'TABLES'],
    [0, 'TABLE'],
    [2, 'LAYER'],
    [70, 2],
    [0, 'LAYER'],
    [2, '0'],
    [70, 0],
    [0, 'LAYER'],
    [2, 'DIMENSIONS'],
    [70, 0],
    [0, 'ENDTAB'],
    [0, 'ENDSEC'],
    [0, 'SECTION'],
    [2, 'ENTITIES'],
    [0, 'LINE'],
    [8, '0'],
    [10, 0],
    [20, 0],
    [11, 100],
    [21, 0],
    [0, 'LINE'],
    [8, '0'],
    [10, 100],
    [20, 0],
    [11, 100],
    [21, 50],
    [0, 'LINE'],
    [8, '0'],
    [10, 100],
    [20, 50],
    [11, 0],
    [21, 50],
    [0, 'CIRCLE'],
    [8, 'DIMENSIONS'],
    [10, 50],
    [20, 25],
    [40, 10],
    [0, 'ENDSEC'],
    [0, 'EOF'],
  ];
  return `${pairs.map(([code, value]) => `${String(code).padStart(3)}\r\n${value}`).join('\r\n')}\r\n`;
}

/**
 * A real STEP file with B-rep geometry: the 10 mm cube Autodesk Inventor 2019 exported, shipped with
 * occt-import-js's own tests (read from the installed package, not copied here).
 */
export function inventorCubeStep(): Buffer {
  const packageJson = require.resolve('occt-import-js/package.json', {
    paths: [join(__dirname, '..', '..', '..', '..', 'packages', 'geometry')],
  });
  return readFileSync(join(dirname(packageJson), 'test/testfiles/cube-10x10mm/Cube 10x10.stp'));
}

/**
 * A SolidWorks file as SolidWorks up to 2014 saved them: an OLE2 compound file (written by the
 * `cfb` package) with the streams such a part has and the preview in `PreviewPNG`.
 */
export function solidWorksCompound(previewPng: Buffer | null): Buffer {
  const container = CFB.utils.cfb_new();
  CFB.utils.cfb_add(container, 'Header2', Buffer.from('SolidWorks part header'));
  CFB.utils.cfb_add(container, 'Contents/Config-0-Partition', Buffer.alloc(4096, 7));
  if (previewPng) CFB.utils.cfb_add(container, 'PreviewPNG', previewPng);
  return Buffer.from(CFB.write(container, { type: 'buffer' }) as Uint8Array);
}

/**
 * A file in SolidWorks' later container: opaque sections around a stored PNG preview, with a PNG
 * signature inside the opaque bytes too (a parser must walk the chunks, not trust the signature).
 */
export function solidWorksLater(previewPng: Buffer): Buffer {
  const opaque = Buffer.alloc(2048, 0x5a);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 1, 0x41]).copy(opaque, 100);
  return Buffer.concat([Buffer.from([0x14, 0x00, 0x06, 0x00, 0x08, 0x00]), opaque, previewPng, opaque]);
}
