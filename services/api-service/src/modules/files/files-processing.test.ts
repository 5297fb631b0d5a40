import { randomBytes } from 'node:crypto';
import { type FileRecord, RoutingKeys } from '@hwp/contracts';
import { asciiStlBox, binaryStlBox, inventorCubeStep, objTwoCubes } from '@hwp/geometry/test-kit';
import { checkedEvent } from '@hwp/platform';
import { expectEventually } from '@hwp/platform/test-kit';
import sharp from 'sharp';
import { as, signUp, type TestUser } from '#test/api-test-kit';
import { dxfDrawing, solidWorksCompound, solidWorksLater, stepAssembly } from '#test/cad-fixtures';
import { EICAR, type RunningClamd, startClamd } from '#test/clamd';
import { upload } from '#test/factories';
import { binary, settled, startFilesApi } from '#test/files-test-setup';

/** Bytes only clamd knows as malware (its signature file lists their md5): the built-in checks pass them. */
const SAMPLE = randomBytes(4096);

let clamd: RunningClamd;
let stack: Awaited<ReturnType<typeof startFilesApi>>;
let user: TestUser;
beforeAll(async () => {
  clamd = await startClamd({ 'Hwp-Test-Sample': SAMPLE });
  stack = await startFilesApi({ CLAMD_HOST: clamd.host, CLAMD_PORT: String(clamd.port) });
  user = await signUp(stack.api.app);
}, 90_000);
afterAll(async () => {
  await stack?.stop();
  await clamd?.stop();
});

/** Uploads and waits until processing ended; returns the final record. */
async function processed(name: string, content: Buffer | string): Promise<FileRecord> {
  const client = as(stack.api.app, user);
  return settled(client, await upload(client, `${randomBytes(3).toString('hex')}-${name}`, content));
}

describe('metadata and previews', () => {
  test('a binary STL: dimensions of its box, triangle count, cad-3d, and a thumbnail that is not blank', async () => {
    const file = await processed('box.stl', binaryStlBox(10, 20, 30, [5, -5, 2]));
    expect(file).toMatchObject({ processing_status: 'ready', classification: 'cad-3d' });
    expect(file.metadata).toMatchObject({
      dimensions: { width: 10, height: 20, depth: 30, units: null },
      components: 1,
      software: null,
      custom_properties: { format: 'stl-binary', triangles: 12, vertices: 36 },
    });
    const cad = await as(stack.api.app, user).get(`/files/${file.id}/cad-metadata`);
    expect(cad.body).toMatchObject({
      format: 'stl-binary',
      classification: 'cad-3d',
      revision_id: file.current_revision_id,
    });

    const thumbnail = await as(stack.api.app, user).get(file.thumbnail_url).buffer(true).parse(binary);
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers['content-type']).toBe('image/png');
    const { data, info } = await sharp(thumbnail.body as Buffer)
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([128, 128]);
    const background = data.subarray(0, 3).join(',');
    let drawn = 0;
    for (let i = 0; i < data.length; i += info.channels)
      if (data.subarray(i, i + 3).join(',') !== background) drawn++;
    expect(drawn / (info.width * info.height)).toBeGreaterThan(0.15);
    const preview = await as(stack.api.app, user).get(file.preview_url).buffer(true).parse(binary);
    expect((await sharp(preview.body as Buffer).metadata()).width).toBe(512);
  });

  test('an ASCII STL and an OBJ with two objects', async () => {
    const stl = await processed('box.stl', asciiStlBox(3, 4, 5));
    expect(stl.metadata).toMatchObject({
      dimensions: { width: 3, height: 4, depth: 5 },
      custom_properties: { format: 'stl-ascii', triangles: 12 },
    });
    const obj = await processed('cubes.obj', objTwoCubes());
    expect(obj).toMatchObject({ classification: 'cad-3d' });
    expect(obj.metadata).toMatchObject({
      dimensions: { width: 6, height: 6, depth: 6, units: null },
      components: 2,
      custom_properties: { format: 'obj', triangles: 24, vertices: 16 },
    });
  });

  test('a STEP assembly: software, units and product counts from its text; no preview yet', async () => {
    const file = await processed('assy.step', stepAssembly());
    expect(file).toMatchObject({ processing_status: 'ready', classification: 'cad-3d' });
    expect(file.metadata).toMatchObject({
      software: 'SolidWorks 2022',
      components: 3,
      dimensions: null,
      custom_properties: {
        format: 'step',
        units: 'mm',
        products: 3,
        assembly_usages: 2,
        assembly: true,
        author: "Ada O'Neil",
      },
    });
    const preview = await as(stack.api.app, user).get(file.preview_url);
    expect(preview.status).toBe(404);
    expect(preview.body.code).toBe('not_found');
  });

  test('a STEP part with geometry: its bounding box through OpenCascade, in millimetres, and a preview', async () => {
    const file = await processed('cube.stp', inventorCubeStep());
    expect(file).toMatchObject({ processing_status: 'ready', classification: 'cad-3d' });
    expect(file.metadata).toMatchObject({
      software: 'Autodesk Inventor 2019',
      dimensions: { width: 10, height: 10, depth: 10, units: 'mm' },
      custom_properties: { format: 'step', units: 'mm', products: 1 },
    });
    const thumbnail = await as(stack.api.app, user).get(file.thumbnail_url).buffer(true).parse(binary);
    expect(thumbnail.status).toBe(200);
    expect((await sharp(thumbnail.body as Buffer).stats()).channels[0].stdev).toBeGreaterThan(5);
  });

  test('a DXF drawing: units, extents, layers and entities', async () => {
    const file = await processed('plate.dxf', dxfDrawing());
    expect(file).toMatchObject({ classification: 'cad-2d' });
    expect(file.metadata).toMatchObject({
      dimensions: { width: 100, height: 50, depth: 0, units: 'mm' },
      custom_properties: { format: 'dxf', version: 'AC1015', layers: 2, entities: { LINE: 3, CIRCLE: 1 } },
    });
    // The drawing's SVG, rasterised: 512 px wide, twice as wide as high like the drawing.
    const preview = await as(stack.api.app, user).get(file.preview_url).buffer(true).parse(binary);
    expect(preview.status).toBe(200);
    const info = await sharp(preview.body as Buffer).metadata();
    expect([info.width, info.height]).toEqual([512, 256]);
    expect((await sharp(preview.body as Buffer).stats()).channels[0].min).toBeLessThan(128);
  });

  test('an image: pixel size through sharp, classified by content even under a wrong extension', async () => {
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    const file = await processed('photo.png', png);
    expect(file).toMatchObject({
      classification: 'image',
      metadata: { dimensions: { width: 40, height: 30, units: 'px' } },
    });
    expect((await as(stack.api.app, user).get(file.thumbnail_url)).status).toBe(200);
    const unnamed = await processed('render.dat', png);
    expect(unnamed).toMatchObject({ processing_status: 'ready', classification: 'image' });
    // Under an extension it contradicts, it is quarantined (still said to be an image).
    const zipped = await processed('render.zip', png);
    expect(zipped).toMatchObject({ processing_status: 'quarantined', classification: 'image' });
  });

  test('SolidWorks files: the container and the preview saved in it, nothing guessed', async () => {
    const saved = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#203040' } })
      .png()
      .toBuffer();
    const old = await processed('bracket.sldprt', solidWorksCompound(saved));
    expect(old).toMatchObject({ processing_status: 'ready', classification: 'cad-3d' });
    expect(old.metadata).toMatchObject({
      dimensions: null,
      software: null,
      custom_properties: { format: 'sldprt', container: 'ole-compound', embedded_preview: 'PreviewPNG' },
    });
    expect(old.metadata.custom_properties?.streams).toEqual(
      expect.arrayContaining(['Header2', 'Config-0-Partition', 'PreviewPNG']),
    );
    const preview = await as(stack.api.app, user).get(old.preview_url).buffer(true).parse(binary);
    expect(preview.status).toBe(200);
    const shown = await sharp(preview.body as Buffer).metadata();
    // The saved 300 x 200 image, never enlarged.
    expect([shown.width, shown.height]).toEqual([300, 200]);
    const thumbnail = await as(stack.api.app, user).get(old.thumbnail_url).buffer(true).parse(binary);
    expect((await sharp(thumbnail.body as Buffer).metadata()).width).toBe(128);

    const later = await processed('housing.sldasm', solidWorksLater(saved));
    expect(later.metadata.custom_properties).toMatchObject({
      format: 'sldasm',
      container: 'solidworks-2015',
      embedded_preview: 'embedded-png',
    });
    expect((await as(stack.api.app, user).get(later.preview_url)).status).toBe(200);

    const bare = await processed('plain.sldprt', solidWorksCompound(null));
    expect(bare.metadata.custom_properties).toMatchObject({
      container: 'ole-compound',
      embedded_preview: null,
    });
    const none = await as(stack.api.app, user).get(bare.preview_url);
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('not_found');
  });

  test('text is indexed: GET /files?q= finds words in the content and in the metadata', async () => {
    const word = `flange${randomBytes(3).toString('hex')}`;
    const note = await processed('notes.txt', `Torque the ${word} bolts to 12 Nm.`);
    const step = await processed('indexed.step', stepAssembly());
    const byText = await as(stack.api.app, user).get('/files').query({ q: word });
    expect(byText.body.items.map((f: FileRecord) => f.id)).toEqual([note.id]);
    const bySoftware = await as(stack.api.app, user).get('/files').query({ q: 'SolidWorks' });
    expect(bySoftware.body.items.map((f: FileRecord) => f.id)).toContain(step.id);
  });
});

describe('scan', () => {
  test('the EICAR file is quarantined and cannot be downloaded', async () => {
    const file = await processed('eicar.com', EICAR);
    expect(file.processing_status).toBe('quarantined');
    const download = await as(stack.api.app, user).get(file.url);
    expect(download.status).toBe(403);
    expect(download.body.code).toBe('forbidden');
    expect((await as(stack.api.app, user).get(file.thumbnail_url)).status).toBe(404);
  });

  test('what only clamd knows is quarantined with clamd’s signature; content contradicting its name too', async () => {
    const infected = await processed('firmware.bin', SAMPLE);
    expect(infected.processing_status).toBe('quarantined');
    const rows = await stack.api.deps.dataSource.query('SELECT stages FROM file_revisions WHERE id = $1', [
      infected.current_revision_id,
    ]);
    expect(rows[0].stages.scan).toMatchObject({
      verdict: 'infected',
      signature: 'Hwp-Test-Sample.UNOFFICIAL',
      engines: ['builtin', 'clamd'],
    });

    const disguised = await processed('image.png', Buffer.concat([Buffer.from('MZ'), randomBytes(200)]));
    expect(disguised.processing_status).toBe('quarantined');
    const clean = await processed(
      'firmware2.bin',
      Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), randomBytes(200)]),
    );
    expect(clean.processing_status).toBe('ready');
  });
});

describe('idempotence', () => {
  test('redelivering file.uploaded.v1 for a processed revision changes nothing', async () => {
    const file = await processed('again.stl', binaryStlBox(1, 2, 3));
    const db = stack.api.deps.dataSource;
    const before = await db.query('SELECT * FROM file_revisions WHERE id = $1', [file.current_revision_id]);
    const countProcessed = async () =>
      (
        await db.query(
          "SELECT count(*)::int AS n FROM outbox WHERE envelope->>'type' = $1 AND envelope->'data'->>'revisionId' = $2",
          [RoutingKeys.fileProcessed, file.current_revision_id],
        )
      )[0].n as number;
    expect(await countProcessed()).toBe(1);
    const [uploaded] = await db.query(
      "SELECT envelope FROM outbox WHERE envelope->>'type' = $1 AND envelope->'data'->>'revisionId' = $2",
      [RoutingKeys.fileUploaded, file.current_revision_id],
    );
    const { data } = checkedEvent(uploaded.envelope, [RoutingKeys.fileUploaded]);
    // The same envelope again (the inbox drops it) and a new envelope for the same revision (the pipeline skips it).
    await stack.api.deps.bus.transaction((manager) =>
      stack.api.deps.bus.outbox.add(manager, {
        type: RoutingKeys.fileUploaded,
        tenantId: file.tenant_id,
        actor: 'test',
        data,
      }),
    );
    const marker = await stack.api.deps.bus.transaction((manager) =>
      stack.api.deps.bus.outbox.add(manager, {
        type: RoutingKeys.fileUploaded,
        tenantId: file.tenant_id,
        actor: 'test',
        data: { ...data, revisionId: '00000000-0000-7000-8000-000000000000' },
      }),
    );
    await expectEventually(async () => {
      const [row] = await db.query('SELECT count(*)::int AS n FROM inbox WHERE event_id = $1', [marker.id]);
      expect(row.n).toBe(1);
    });
    expect(await db.query('SELECT * FROM file_revisions WHERE id = $1', [file.current_revision_id])).toEqual(
      before,
    );
    expect(await countProcessed()).toBe(1);
  });
});

describe('with clamd down (last: it stops clamd)', () => {
  test('nothing is called clean: the revision stays in processing and its download answers 409', async () => {
    await clamd.stop();
    const client = as(stack.api.app, user);
    const file = await upload(client, `${randomBytes(3).toString('hex')}-unscanned.txt`, 'not scanned');
    await expectEventually(async () =>
      expect((await client.get(`/files/${file.id}`)).body.processing_status).toBe('processing'),
    );
    // Still not clean after the bus retried it for a while.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await client.get(`/files/${file.id}`)).body.processing_status).toBe('processing');
    const download = await client.get(file.url);
    expect(download.status).toBe(409);
    expect(download.headers['retry-after']).toBe('5');
  });
});
