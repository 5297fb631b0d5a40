import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Papa from 'papaparse';
import {
  type ParsedSheet,
  parseSpreadsheet,
  SpreadsheetError,
} from '../../src/spreadsheets/parse-spreadsheet';
import { collabAs, type Stack, startStack, type TestUser, teamWorkspace } from './collab-test-kit';
import { SseClient } from './sse-client';

/** What the tests of src/modules/parts/import share: spreadsheet parsing helpers and the import stack. */

export const MB = 1024 * 1024;

/** The rows as objects keyed by header, to compare against. */
export const records = (sheet: ParsedSheet) =>
  sheet.rows.map((values) => Object.fromEntries(sheet.headers.map((header, i) => [header, values[i]])));

export const csv = (text: string, filename = 'parts.csv', contentType = 'text/csv') =>
  parseSpreadsheet({ buffer: Buffer.from(text, 'utf8'), filename, contentType });

/** The SpreadsheetError a promise rejects with (fails the test when it resolves or throws another error). */
export async function refusal(promise: Promise<unknown>): Promise<SpreadsheetError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof SpreadsheetError))
    throw new Error(`expected a SpreadsheetError, got ${String(error)}`);
  return error;
}

/** A row of an import file, by header. */
export type Row = Record<string, string>;

/** A valid row `i`: varied domains, tags, attributes, costs. */
export function goodRow(i: number): Row {
  const domain = ['other', 'mechanical', 'electronic', 'chemical'][i % 4];
  const attributes =
    domain === 'mechanical'
      ? { material: 'steel', finish: 'zinc', tolerance: '0.1' }
      : domain === 'electronic'
        ? { package: '0603', value: `${i}R`, voltage_rating: '50V' }
        : domain === 'chemical'
          ? { cas_number: '7732-18-5', concentration: '99%', hazard_class: 'none' }
          : {};
  return {
    'Part Number': `IMP-${String(i).padStart(5, '0')}`,
    Name: `Imported part ${i}`,
    Domain: domain,
    unit: 'each',
    Tags: i % 2 ? 'alpha|beta' : 'alpha, gamma',
    attrs: JSON.stringify(attributes),
    'Unit Cost': `${(i % 97) + 0.25}`,
    Currency: 'EUR',
    RoHS: i % 3 ? 'yes' : 'no',
    MPN: `MPN-${i}`,
  };
}

/** CSV with the union of the rows' keys as header (blank where a row has no value). */
export function csvOf(rows: Record<string, string | undefined>[]): Buffer {
  const fields = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return Buffer.from(Papa.unparse({ fields, data: rows.map((r) => fields.map((f) => r[f] ?? '')) }), 'utf8');
}

/**
 * A stack of its own (fresh databases) for the test file, started before its tests and stopped after
 * them; the collaboration host also listens on a real port, for streams and aborted uploads.
 * `started` gets the stack and that port's base URL. Returns helpers bound to the stack.
 */
export function usePartImportStack(started: (running: { stack: Stack; base: string }) => void = () => {}) {
  let stack: Stack;
  let server: Server;
  let base: string;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    // One import at a time and no waiting for a slot, so a test can see the second one turned away.
    stack = await startStack({ collab: { IMPORT_CONCURRENCY: '1', IMPORT_QUEUE_WAIT_MS: '1' } });
    server = createServer(stack.collab.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    started({ stack, base });
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await stack?.stop();
  });

  const as = (user: TestUser) => collabAs(stack.collab.app, user);

  const team = () => teamWorkspace(stack, 'imp');

  function upload(
    user: TestUser,
    workspace: string,
    file: Buffer,
    options: { dryRun?: boolean; filename?: string; contentType?: string } = {},
  ) {
    return as(user)
      .post('/v1/parts/import')
      .field('workspace', workspace)
      .field('dryRun', options.dryRun ? 'true' : 'false')
      .attach('file', file, {
        filename: options.filename ?? 'parts.csv',
        contentType: options.contentType ?? 'text/csv',
      });
  }

  async function partCount(workspaceId: string): Promise<number> {
    const [{ count }] = await stack.collab.deps.dataSource.query(
      'SELECT count(*)::int AS count FROM parts WHERE workspace_id = $1',
      [workspaceId],
    );
    return count;
  }

  /** The workspace's part history rows and its latest part change (an import that changes nothing leaves both). */
  async function historyState(workspaceId: string) {
    const [row] = await stack.collab.deps.dataSource.query(
      `SELECT count(h.*)::int AS history, max(p.updated_at)::text AS updated
         FROM parts p LEFT JOIN part_history h ON h.part_id = p.id WHERE p.workspace_id = $1`,
      [workspaceId],
    );
    return row as { history: number; updated: string };
  }

  async function openStream(user: TestUser, workspace: string): Promise<SseClient> {
    const client = await SseClient.open(base, `/v1/events?workspace=${workspace}`, user.token);
    expect(client.status).toBe(200);
    clients.push(client);
    return client;
  }

  return { as, team, upload, partCount, historyState, openStream };
}
