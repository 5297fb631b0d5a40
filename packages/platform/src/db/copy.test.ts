import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../test-kit/database';
import { CopyFeed, CopyText } from './copy';
import { createDataSource } from './data-source';

let db: TestDatabase;
let dataSource: DataSource;

beforeAll(async () => {
  db = await createTestDatabase('copyfeed');
  dataSource = createDataSource({ url: db.url, entities: [], migrations: [] });
  await dataSource.initialize();
  await dataSource.query('CREATE TABLE items (id int PRIMARY KEY, label text, tags text[], doc jsonb)');
});

afterAll(async () => {
  await dataSource?.destroy();
  await db?.drop();
});

const COPY = 'COPY items (id, label, tags, doc) FROM STDIN';

describe('CopyFeed', () => {
  it('stores rows fed in several writes from one reused buffer, once it ends', async () => {
    await dataSource.transaction(async (manager) => {
      const feed = await CopyFeed.open(manager, COPY);
      const text = new CopyText(64);
      for (let batch = 0; batch < 3; batch++) {
        for (let i = 0; i < 1000; i++) {
          const id = batch * 1000 + i;
          text.add([id, `tab\there "quoted" \\ line\nbreak ${id}`, ['a,b', 'c"d'], { id, ü: 'ü' }]);
        }
        await feed.write(text.bytes());
        text.clear(); // the next batch overwrites the bytes just written
      }
      await feed.end();
      const [{ n }] = await manager.query('SELECT count(*)::int AS n FROM items');
      expect(n).toBe(3000);
    });
    const rows = await dataSource.query('SELECT * FROM items WHERE id IN (0, 1999, 2999) ORDER BY id');
    expect(rows).toEqual(
      [0, 1999, 2999].map((id) => ({
        id,
        label: `tab\there "quoted" \\ line\nbreak ${id}`,
        tags: ['a,b', 'c"d'],
        doc: { id, ü: 'ü' },
      })),
    );
    await dataSource.query('TRUNCATE items');
  });

  it('rejects a write and the end with the error of a COPY that never started, and the transaction rolls back', async () => {
    await expect(
      dataSource.transaction(async (manager) => {
        const feed = await CopyFeed.open(manager, 'COPY no_such_table (id) FROM STDIN');
        const text = new CopyText();
        text.add([1]);
        await expect(feed.write(text.bytes())).rejects.toMatchObject({ code: '42P01' });
        await expect(feed.end()).rejects.toMatchObject({ code: '42P01' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await dataSource.query('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
  });

  it('rejects with the constraint a later batch breaks; nothing of the COPY is kept', async () => {
    await dataSource.query("INSERT INTO items (id, label) VALUES (5000, 'taken')");
    await expect(
      dataSource.transaction(async (manager) => {
        const feed = await CopyFeed.open(manager, COPY);
        const text = new CopyText();
        for (let id = 4000; id < 6000; id++) text.add([id, 'x', [], {}]);
        await feed.write(text.bytes()).catch(() => {}); // the error may come with this write or the end
        await feed.end();
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await dataSource.query('SELECT id FROM items')).toEqual([{ id: 5000 }]);
    // The connection went back to the pool in a usable state.
    expect(await dataSource.query('SELECT count(*)::int AS n FROM items')).toEqual([{ n: 1 }]);
  });

  it('needs a transaction', async () => {
    await expect(CopyFeed.open(dataSource.manager, COPY)).rejects.toThrow('needs a transaction');
  });
});
