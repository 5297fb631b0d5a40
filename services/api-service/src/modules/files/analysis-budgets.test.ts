import type { FileRecord } from '@hwp/contracts';
import { expectEventually } from '@hwp/platform/test-kit';
import { type ApiTestService, as, signUp, startApi, type TestUser } from '#test/api-test-kit';
import { upload } from '#test/factories';

// Issue 34, finding 5: small CAD files whose content expands (DXF blocks arrayed and nested) end
// failed with the reason at once, and do not hold the processing slots meanwhile.
let api: ApiTestService;
beforeAll(async () => {
  api = await startApi();
}, 60_000);
afterAll(() => api?.stop());

/** The file's record once its processing ended (waited for in the database: polling the API would hit its rate limit). */
async function final(user: TestUser, id: string): Promise<FileRecord> {
  await expectEventually(
    async () => {
      const [row] = await api.deps.dataSource.query(
        `SELECT r.processing_status FROM files f JOIN file_revisions r ON r.id = f.current_revision_id
          WHERE f.id = $1`,
        [id],
      );
      expect(['ready', 'failed', 'quarantined']).toContain(row?.processing_status);
    },
    { timeoutMs: 30_000 },
  );
  return (await as(api.app, user).get(`/files/${id}`).expect(200)).body as FileRecord;
}

/** A DXF whose INSERT places one block `cols` x `rows` times (about 300 bytes). */
function dxfArray(cols: number, rows: number): string {
  return [
    ...['0', 'SECTION', '2', 'BLOCKS', '0', 'BLOCK', '2', 'B', '10', '0', '20', '0'],
    ...['0', 'LINE', '8', '0', '10', '0', '20', '0', '11', '1', '21', '1', '0', 'ENDBLK', '0', 'ENDSEC'],
    ...['0', 'SECTION', '2', 'ENTITIES', '0', 'INSERT', '8', '0', '2', 'B', '10', '0', '20', '0'],
    ...['70', String(cols), '71', String(rows), '44', '2', '45', '2', '0', 'ENDSEC', '0', 'EOF', ''],
  ].join('\n');
}

/** Ten block levels, each inserting the one below ten times (10^10 lines once expanded; about 4 KB). */
function dxfNested(levels = 10): string {
  const lines = ['0', 'SECTION', '2', 'BLOCKS', '0', 'BLOCK', '2', 'L0', '10', '0', '20', '0'];
  lines.push('0', 'LINE', '8', '0', '10', '0', '20', '0', '11', '1', '21', '1', '0', 'ENDBLK');
  for (let level = 1; level <= levels; level++) {
    lines.push('0', 'BLOCK', '2', `L${level}`, '10', '0', '20', '0');
    for (let i = 0; i < 10; i++)
      lines.push('0', 'INSERT', '8', '0', '2', `L${level - 1}`, '10', String(i), '20', '0');
    lines.push('0', 'ENDBLK');
  }
  lines.push('0', 'ENDSEC', '0', 'SECTION', '2', 'ENTITIES', '0', 'INSERT', '8', '0', '2', `L${levels}`);
  lines.push('10', '0', '20', '0', '0', 'ENDSEC', '0', 'EOF', '');
  return lines.join('\n');
}

/**
 * Each level defined twice: first empty, then inserting the level below ten times. The drawer takes
 * a name's last definition (a count that took the first saw nothing to expand).
 */
function dxfRedefined(levels = 10): string {
  const nested = dxfNested(levels).split('\n');
  const empty: string[] = [];
  for (let level = 1; level <= levels; level++) empty.push('0', 'BLOCK', '2', `L${level}`, '0', 'ENDBLK');
  const blocks = nested.indexOf('BLOCKS') + 1;
  return [...nested.slice(0, blocks), ...empty, ...nested.slice(blocks)].join('\n');
}

/** An array behind a line the drawer skips (not a group code): a count that stopped there saw nothing. */
function dxfAfterJunk(cols: number, rows: number): string {
  const header = ['0', 'SECTION', '2', 'HEADER', 'junk', 'line', '0', 'ENDSEC'].join('\n');
  return `${header}\n${dxfArray(cols, rows)}`;
}

const OVER_BUDGET =
  'the drawing expands past its budget of 2000000 entities and points (blocks placed too many times)';

test('DXF files that expand past the budget end failed with the reason, promptly; a small array is drawn', async () => {
  const user = await signUp(api.app);
  const array = dxfArray(3000, 3000);
  expect(array.length).toBeLessThan(400);
  const nested = dxfNested();
  expect(nested.length).toBeLessThan(5000);
  const bombs = {
    'array.dxf': array,
    'nested.dxf': nested,
    'redefined.dxf': dxfRedefined(),
    'junk.dxf': dxfAfterJunk(3000, 3000),
    // 40,000 copies: the drawer copies its list once per copy (about 8 s of work).
    'grid-40k.dxf': dxfArray(200, 200),
  };
  const started = Date.now();
  const uploaded = await Promise.all(
    Object.entries(bombs).map(([name, content]) => upload(as(api.app, user), name, content)),
  );
  const fine = await upload(as(api.app, user), 'grid.dxf', dxfArray(10, 10));
  for (const file of uploaded) {
    const record = await final(user, file.id);
    expect([record.name, record.processing_status, record.processing_error]).toEqual([
      file.name,
      'failed',
      OVER_BUDGET,
    ]);
  }
  expect(Date.now() - started).toBeLessThan(10_000);
  const drawn = await final(user, fine.id);
  expect([drawn.processing_status, drawn.processing_error]).toEqual(['ready', null]);
  expect(drawn.metadata.custom_properties).toMatchObject({ format: 'dxf' });
  // The drawing's preview was drawn.
  expect((await as(api.app, user).get(drawn.preview_url)).status).toBe(200);
});

test('metadata too large to index whole still ends ready, promptly (DXF entity types, a STEP author)', async () => {
  const user = await signUp(api.app);
  const words = Array.from({ length: 200_000 }, (_, i) => `w${i.toString().padStart(6, '0')}`);
  // 200,000 distinct entity types (2 MB) and a 1.6 MB author of distinct words: either made a search
  // vector over Postgres' 1 MB, so the file failed its processing again and again.
  const dxf = `0\nSECTION\n2\nENTITIES\n${words.map((w) => `0\n${w}\n`).join('')}0\nENDSEC\n0\nEOF\n`;
  const step = [
    'ISO-10303-21;',
    'HEADER;',
    `FILE_NAME('part','2026-01-01T00:00:00',('${words.join(' ')}'),(''),'','','');`,
    "FILE_SCHEMA(('AUTOMOTIVE_DESIGN'));",
    'ENDSEC;',
    'DATA;',
    'ENDSEC;',
    'END-ISO-10303-21;',
  ].join('\n');
  const files = [
    await upload(as(api.app, user), 'types.dxf', dxf),
    await upload(as(api.app, user), 'author.step', step),
  ];
  for (const file of files) {
    const record = await final(user, file.id);
    expect([record.name, record.processing_status, record.processing_error]).toEqual([
      file.name,
      'ready',
      null,
    ]);
  }
  // The drawing keeps 64 entity types by name (the rest as OTHER); both are found by what was indexed.
  const drawing = (await as(api.app, user).get(`/files/${files[0].id}`).expect(200)).body as FileRecord;
  expect(JSON.stringify(drawing.metadata).match(/"w\d{6}"/g)).toHaveLength(64);
  const found = await as(api.app, user).get('/files').query({ q: 'w000001' }).expect(200);
  expect(found.body.items.map((f: FileRecord) => f.id).sort()).toEqual(files.map((f) => f.id).sort());
}, 60_000);
