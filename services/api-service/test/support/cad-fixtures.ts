import * as CFB from 'cfb';

/**
 * CAD files of known metadata, made in code, for the processing tests (meshes and a B-rep STEP file:
 * `@hwp/geometry/test-kit`).
 */

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
