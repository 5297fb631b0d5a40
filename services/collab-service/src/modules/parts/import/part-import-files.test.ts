import type { PartList } from '@hwp/contracts';
import type { Team } from '#test/collab-test-kit';
import { csvOf, MB, usePartImportStack } from '#test/parts-import-kit';
import { deflatedZeros, workbook, XLSX_SKELETON, zip } from '#test/spreadsheets';

let base: string;
const { as, team, upload, partCount, openStream } = usePartImportStack((running) => {
  base = running.base;
});

describe('parts import: XLSX', () => {
  it('imports a workbook, using the stored result of a formula and never evaluating it', async () => {
    const t = await team();
    const file = workbook(
      {
        A1: { t: 's', v: 'Part Number' },
        B1: { t: 's', v: 'Name' },
        C1: { t: 's', v: 'Unit Cost' },
        A2: { t: 's', v: 'X-1' },
        B2: { t: 's', v: 'Formula with a result' },
        // An evaluation would give 2; the file says 7.
        C2: { t: 'n', f: '1+1', v: 7 },
        A3: { t: 's', v: 'X-2' },
        B3: { t: 's', v: 'Formula without a result' },
        C3: { t: 'n', f: '1+1' },
      },
      'A1:C3',
    );
    const xlsxType = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    const dry = await upload(t.engineer, t.workspace, file, {
      dryRun: true,
      filename: 'p.xlsx',
      contentType: xlsxType,
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ format: 'xlsx', rows: 2, valid: 1 });
    expect(dry.body.errors).toEqual([
      { row: 3, column: 'Unit Cost', message: expect.stringMatching(/formula without a saved value/) },
    ]);
    const good = workbook(
      {
        A1: { t: 's', v: 'pn' },
        B1: { t: 's', v: 'name' },
        C1: { t: 's', v: 'cost' },
        A2: { t: 's', v: 'X-1' },
        B2: { t: 's', v: 'F' },
        C2: { t: 'n', f: '1+1', v: 7 },
      },
      'A1:C2',
    );
    const res = await upload(t.engineer, t.workspace, good, { filename: 'p.xlsx', contentType: xlsxType });
    expect(res.status).toBe(200);
    const list = (await as(t.viewer).get('/v1/parts').query({ workspace: t.workspace })).body as PartList;
    expect(list.items.map((p) => [p.partNumber, p.unitCost])).toEqual([['X-1', 7]]);
  });
});

describe('parts import: refused files', () => {
  let t: Team;
  beforeAll(async () => {
    t = await team();
  });

  it('answers 413 for a file over 50 MB and for a zip bomb, 415 for a PNG and for a Latin-1 CSV', async () => {
    const big = Buffer.alloc(60 * MB, 'a');
    const tooBig = await upload(t.engineer, t.workspace, big);
    expect([tooBig.status, tooBig.body.code]).toEqual([413, 'payload_too_large']);
    expect(tooBig.body.detail).toMatch(/50 MB/);

    const stored = await deflatedZeros(200 * MB);
    const bomb = zip([
      ...XLSX_SKELETON,
      { name: 'xl/worksheets/sheet1.xml', stored, method: 8, size: 200 * MB },
    ]);
    const bombed = await upload(t.engineer, t.workspace, bomb, {
      filename: 'parts.xlsx',
      contentType: 'application/octet-stream',
    });
    expect([bombed.status, bombed.body.code]).toEqual([413, 'payload_too_large']);

    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const image = await upload(t.engineer, t.workspace, png, {
      filename: 'parts.png',
      contentType: 'image/png',
    });
    expect([image.status, image.body.code]).toEqual([415, 'unsupported_media_type']);

    const latin1 = Buffer.from('Part Number,Name\nP-1,Caf\u00e9 cr\u00e8me\n', 'latin1');
    const encoded = await upload(t.engineer, t.workspace, latin1);
    expect([encoded.status, encoded.body.code]).toEqual([415, 'unsupported_media_type']);
    expect(encoded.body.detail).toMatch(/UTF-8/);
    expect(await partCount(t.id)).toBe(0);
  }, 60_000);

  it('answers 415 without multipart, 400 without a file part or a part number column, 403 for a viewer', async () => {
    const json = await as(t.engineer)
      .post('/v1/parts/import')
      .query({ workspace: t.workspace })
      .send({ rows: [] });
    expect([json.status, json.body.code]).toEqual([415, 'unsupported_media_type']);
    const noFile = await as(t.engineer).post('/v1/parts/import').field('workspace', t.workspace);
    expect([noFile.status, noFile.body.errors]).toEqual([400, [{ field: 'file', message: 'required' }]]);
    const noColumn = await upload(t.engineer, t.workspace, csvOf([{ Name: 'x' }]));
    expect(noColumn.status).toBe(400);
    expect(noColumn.body.detail).toMatch(/part number column/);
    const badFlag = await upload(t.engineer, t.workspace, csvOf([{ pn: 'A' }])).field('dryRun', 'maybe');
    expect(badFlag.status).toBe(400);
    const viewer = await upload(t.viewer, t.workspace, csvOf([{ pn: 'A', name: 'A' }]));
    expect(viewer.status).toBe(403);
  });

  it('keeps answering while a large import runs, and turns a second import away with 503', async () => {
    const rows = Array.from({ length: 150_000 }, (_, i) => ({
      pn: `BIG-${i}`,
      name: `Big ${i}`,
      tags: 'a|b',
    }));
    const stream = await openStream(t.engineer, t.workspace);
    let finished = false;
    const large = upload(t.engineer, t.workspace, csvOf(rows), { dryRun: true }).then((res) => {
      finished = true;
      return res;
    });
    await stream.waitFor((e) => e.type === 'import.progress' && e.data.phase === 'parsing', 30_000);
    const [other, listed] = await Promise.all([
      upload(t.engineer, t.workspace, csvOf([{ pn: 'S-1', name: 'small' }]), { dryRun: true }),
      as(t.viewer).get('/v1/parts').query({ workspace: t.workspace }),
    ]);
    expect(finished).toBe(false);
    expect([other.status, other.headers['retry-after']]).toEqual([503, '5']);
    expect(listed.status).toBe(200);
    const res = await large;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rows: 150_000, valid: 150_000, created: 150_000 });
    const after = await upload(t.engineer, t.workspace, csvOf([{ pn: 'S-1', name: 'small' }]), {
      dryRun: true,
    });
    expect(after.status).toBe(200);
  }, 120_000);
  it('stops, writes nothing and frees its slot when the client goes away during an import', async () => {
    const rows = Array.from({ length: 150_000 }, (_, i) => ({ pn: `GONE-${i}`, name: `Gone ${i}` }));
    const stream = await openStream(t.engineer, t.workspace);
    const form = new FormData();
    form.set('workspace', t.workspace);
    form.set('file', new Blob([csvOf(rows)], { type: 'text/csv' }), 'parts.csv');
    const controller = new AbortController();
    const sent = fetch(`${base}/v1/parts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.engineer.token}` },
      body: form,
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await stream.waitFor((e) => e.type === 'import.progress' && e.data.phase === 'parsing', 30_000);
    controller.abort();
    expect((await sent) as Error).toMatchObject({ name: 'AbortError' });
    const failed = await stream.waitFor(
      (e) => e.type === 'import.progress' && e.data.phase === 'failed',
      30_000,
    );
    expect(failed.data.dryRun).toBe(false);
    expect(await partCount(t.id)).toBe(0);
    const next = await upload(t.engineer, t.workspace, csvOf([{ pn: 'AFTER-1', name: 'after' }]));
    expect([next.status, next.body.created]).toEqual([200, 1]);
  }, 120_000);
});
