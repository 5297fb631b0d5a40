import { fakeOnly } from '@hwp/platform/test-kit';
import { csv, MB, records, refusal } from '#test/parts-import-kit';
import { workbook } from '#test/spreadsheets';
import { openSpreadsheet, parseSpreadsheet } from './parse-spreadsheet';

describe('parseSpreadsheet: type, size and row limits', () => {
  const PNG = Buffer.from([
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52,
  ]);

  it('refuses a PNG with 415, whatever it is called', async () => {
    for (const input of [
      { buffer: PNG, filename: 'logo.png', contentType: 'image/png' },
      { buffer: PNG, contentType: 'image/png' },
      { buffer: PNG, filename: 'parts.csv', contentType: 'image/png' },
      { buffer: PNG, filename: 'parts.csv', contentType: 'text/csv' },
      { buffer: PNG, filename: 'parts.xlsx' },
    ]) {
      const error = await refusal(parseSpreadsheet(input));
      expect([error.status, error.code]).toEqual([415, 'unsupported_media_type']);
    }
  });

  it('decides by content type when there is no file name', async () => {
    const sheet = await parseSpreadsheet({
      buffer: Buffer.from('pn\nP-1\n'),
      contentType: 'text/csv; charset=utf-8',
    });
    expect(records(sheet)).toEqual([{ pn: 'P-1' }]);
    const error = await refusal(parseSpreadsheet({ buffer: Buffer.from('pn\nP-1\n') }));
    expect(error.status).toBe(415);
  });

  it('accepts the content type Windows browsers send for .csv', async () => {
    const sheet = await csv('pn\nP-1\n', 'parts.csv', 'application/vnd.ms-excel');
    expect(records(sheet)).toEqual([{ pn: 'P-1' }]);
  });

  it('refuses a 60 MB file with 413 before parsing it', async () => {
    const error = await refusal(
      parseSpreadsheet({ buffer: Buffer.alloc(60 * MB, 0x61), filename: 'parts.csv' }),
    );
    expect([error.status, error.code]).toEqual([413, 'payload_too_large']);
    expect(error.detail).toBe('The file is 60 MB; the import limit is 50 MB');
  });

  it('refuses 200,001 data rows with 413 naming the limit', async () => {
    const rows = Array.from({ length: 200_001 }, (_, i) => `P-${i}`);
    const error = await refusal(csv(`pn\n${rows.join('\n')}\n`));
    expect([error.status, error.detail]).toEqual([
      413,
      'The file has more than 200,000 data rows (the import limit)',
    ]);
  });

  it('applies a custom row limit to XLSX too', async () => {
    const buffer = workbook(
      { A1: { t: 's', v: 'pn' }, A2: { t: 's', v: 'a' }, A3: { t: 's', v: 'b' }, A4: { t: 's', v: 'c' } },
      'A1:A4',
    );
    const error = await refusal(parseSpreadsheet({ buffer, filename: 'parts.xlsx' }, { maxRows: 2 }));
    expect([error.status, error.detail]).toEqual([
      413,
      'The file has more than 2 data rows (the import limit)',
    ]);
    expect((await parseSpreadsheet({ buffer, filename: 'parts.xlsx' }, { maxRows: 3 })).rowCount).toBe(3);
  });

  it('answers 413, not 500, when the worker runs out of time', async () => {
    // The limit's timer is the only fake one: the clock is moved past it while the worker has only
    // just been started, so the outcome does not depend on how fast this machine parses.
    fakeOnly(['setTimeout', 'clearTimeout']);
    try {
      const buffer = Buffer.from(`pn\n${'P-1\n'.repeat(100_000)}`);
      const parsing = refusal(parseSpreadsheet({ buffer, filename: 'parts.csv' }, { timeoutMs: 30_000 }));
      jest.advanceTimersByTime(30_000);
      const error = await parsing;
      expect([error.status, error.detail]).toEqual([413, expect.stringMatching(/took longer than 30 s/)]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('reads only a few batches ahead of a slow consumer, and its waiting does not count against the time limit', async () => {
    const buffer = Buffer.from(`pn\n${Array.from({ length: 5_000 }, (_, i) => `P-${i}`).join('\n')}\n`);
    const stream = await openSpreadsheet({ buffer, filename: 'parts.csv' }, { timeoutMs: 300 });
    const internals = stream as unknown as { queue: unknown[] };
    let rows = 0;
    let mostQueued = 0;
    const started = Date.now();
    for await (const batch of stream) {
      rows += batch.rows.length;
      mostQueued = Math.max(mostQueued, internals.queue.length);
      await new Promise((resolve) => setTimeout(resolve, 40)); // the consumer: 20 batches x 40 ms
    }
    expect(Date.now() - started).toBeGreaterThan(600); // twice the parse's time limit
    expect([rows, stream.rowCount]).toEqual([5_000, 5_000]);
    expect(mostQueued).toBeLessThanOrEqual(2);
  });

  it('stops the worker when the consumer leaves early', async () => {
    const buffer = Buffer.from(`pn\n${Array.from({ length: 5_000 }, (_, i) => `P-${i}`).join('\n')}\n`);
    const stream = await openSpreadsheet({ buffer, filename: 'parts.csv' });
    const exited = new Promise((resolve) =>
      (stream as unknown as { worker: { once(e: string, f: () => void): void } }).worker.once('exit', () =>
        resolve(true),
      ),
    );
    for await (const batch of stream) {
      expect(batch.rows.length).toBeGreaterThan(0);
      break;
    }
    expect(await exited).toBe(true);
  });

  it('answers 413, not 500, when the worker runs out of memory', async () => {
    // 40 MB of CSV against a 64 MB heap. Far smaller heaps are not a graceful 413: a single allocation
    // beyond the heap limit plus V8's 16 MB grace aborts the whole process (nodejs/node#47224).
    const text = `pn,name\n${'P-123456,a part name of some length\n'.repeat(1_100_000)}`;
    const error = await refusal(
      parseSpreadsheet(
        { buffer: Buffer.from(text), filename: 'parts.csv' },
        { maxMemoryMb: 64, maxRows: 2_000_000 },
      ),
    );
    expect([error.status, error.detail]).toEqual([
      413,
      expect.stringMatching(/needs more than 64 MB of memory/),
    ]);
  });
});

describe('parseSpreadsheet: worker', () => {
  it('reports progress every N rows and at the end', async () => {
    const progress: number[] = [];
    const rows = Array.from({ length: 35 }, (_, i) => `P-${i}`).join('\n');
    const sheet = await parseSpreadsheet(
      { buffer: Buffer.from(`pn\n${rows}`), filename: 'parts.csv' },
      { progressEvery: 10, onProgress: (parsed) => progress.push(parsed) },
    );
    expect(sheet.rowCount).toBe(35);
    expect(progress).toEqual([10, 20, 30, 35]);
  });

  it('keeps the event loop serving timers while it parses 100,000 rows', async () => {
    const lines = Array.from(
      { length: 100_000 },
      (_, i) => `P-${i},Part ${i},"steel|fastener",${i % 7}.25,yes`,
    );
    const buffer = Buffer.from(`part_number,name,tags,unit_cost,rohs_compliant\n${lines.join('\n')}\n`);
    // Parsing on the event loop would hold every timer back until the result is there; in the worker,
    // a timer runs before it is. How often it runs depends on the machine, so only that it ran is
    // checked (bench/spreadsheet-parse measures the event-loop delay).
    let parsed = false;
    let timerRunsWhileParsing = 0;
    const timer = setInterval(() => {
      if (!parsed) timerRunsWhileParsing += 1;
    }, 1);
    try {
      const sheet = await parseSpreadsheet({ buffer, filename: 'parts.csv' }).finally(() => {
        parsed = true;
      });
      expect(sheet.rowCount).toBe(100_000);
      expect(records(sheet)[99_999]).toEqual({
        part_number: 'P-99999',
        name: 'Part 99999',
        tags: 'steel|fastener',
        unit_cost: '4.25',
        rohs_compliant: 'yes',
      });
    } finally {
      clearInterval(timer);
    }
    expect(timerRunsWhileParsing).toBeGreaterThan(0);
  });

  it('leaves the caller buffer intact (the worker gets a copy)', async () => {
    const buffer = Buffer.from('pn\nP-1\n');
    await parseSpreadsheet({ buffer, filename: 'parts.csv' });
    expect(buffer.toString()).toBe('pn\nP-1\n');
  });

  it('stops when the signal aborts', async () => {
    const controller = new AbortController();
    const parsing = parseSpreadsheet(
      { buffer: Buffer.from(`pn\n${'P-1\n'.repeat(100_000)}`), filename: 'parts.csv' },
      { signal: controller.signal },
    );
    controller.abort(new Error('client went away'));
    await expect(parsing).rejects.toThrow('client went away');
  });
});
