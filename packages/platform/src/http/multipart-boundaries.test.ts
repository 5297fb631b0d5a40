import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

// busboy as multer loads it: its boundary search (streamsearch) is patched to use Buffer#indexOf
// (patches/streamsearch@1.1.0.patch). These parses cut the same form at every kind of place, so a
// boundary, or something that starts like one, straddles chunks in every possible way.
type Busboy = (config: { headers: Record<string, string> }) => NodeJS.WritableStream & {
  on(event: 'file', listener: (name: string, stream: NodeJS.ReadableStream) => void): unknown;
  on(event: 'field', listener: (name: string, value: string) => void): unknown;
  on(event: 'close' | 'error', listener: (error?: Error) => void): unknown;
};
const busboy = createRequire(require.resolve('multer'))('busboy') as Busboy;

const BOUNDARY = `----hwp${randomBytes(12).toString('hex')}`;

/** File contents full of near-boundaries: the delimiter without its last byte, its first bytes, CRLF runs. */
function trickyBytes(): Buffer {
  const delimiter = `\r\n--${BOUNDARY}`;
  const pieces: Buffer[] = [];
  for (let i = 0; i < 40; i++) {
    pieces.push(randomBytes(1 + ((i * 37) % 300)));
    pieces.push(Buffer.from(delimiter.slice(0, 1 + (i % (delimiter.length - 1)))));
    pieces.push(Buffer.from(i % 3 === 0 ? '\r\n\r\n--' : '\r\n-'));
  }
  pieces.push(Buffer.from(delimiter.slice(0, -1)));
  return Buffer.concat(pieces);
}

const files: [string, Buffer][] = [
  ['big.bin', randomBytes(300_000)],
  ['tricky.bin', trickyBytes()],
  ['empty.bin', Buffer.alloc(0)],
  ['ends-like-a-boundary.bin', Buffer.from(`data\r\n--${BOUNDARY.slice(0, 10)}`)],
];

function formBody(): Buffer {
  const parts: Buffer[] = [
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n`),
  ];
  for (const [name, bytes] of files) {
    parts.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      ),
      bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(parts);
}

const digest = (bytes: Buffer) => `${bytes.length}:${createHash('sha256').update(bytes).digest('hex')}`;

/** The form's fields and its files' digests, as busboy parses the body written in pieces ending at `cuts`. */
async function parse(body: Buffer, cuts: number[]): Promise<{ fields: string[]; files: string[] }> {
  const parser = busboy({ headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } });
  const fields: string[] = [];
  const found: Promise<Buffer>[] = [];
  parser.on('field', (name, value) => fields.push(`${name}=${value}`));
  parser.on('file', (_name, stream) => {
    const file = new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => resolve(Buffer.concat(chunks)));
      stream.on('error', reject);
    });
    // Awaited below; a parse that fails fails the test through `closed` first.
    file.catch(() => undefined);
    found.push(file);
  });
  const closed = new Promise<void>((resolve, reject) => {
    parser.on('close', () => resolve());
    parser.on('error', reject);
  });
  let start = 0;
  for (const cut of [...cuts, body.length]) {
    parser.write(body.subarray(start, cut));
    start = cut;
  }
  parser.end();
  await closed;
  return { fields, files: (await Promise.all(found)).map(digest) };
}

describe('multipart boundaries across chunks', () => {
  const body = formBody();
  const expected = { fields: ['note=hello'], files: files.map(([, bytes]) => digest(bytes)) };

  it.each([1, 2, 3, 7, 31, 64, 1_000, 16_384, 65_536, body.length])(
    'parses the form fed in %i-byte chunks',
    async (size) => {
      const cuts: number[] = [];
      for (let at = size; at < body.length; at += size) cuts.push(at);
      expect(await parse(body, cuts)).toEqual(expected);
    },
  );

  it('parses the form cut right before, inside and after every delimiter', async () => {
    const delimiter = Buffer.from(`\r\n--${BOUNDARY}`);
    for (let at = body.indexOf(delimiter); at !== -1; at = body.indexOf(delimiter, at + 1)) {
      for (let offset = -2; offset <= delimiter.length + 1; offset++) {
        const cut = at + offset;
        if (cut > 0 && cut < body.length) expect(await parse(body, [cut])).toEqual(expected);
      }
    }
  });

  it('parses the form at random cuts', async () => {
    for (let round = 0; round < 50; round++) {
      const cuts = [...new Set(Array.from({ length: 20 }, () => Math.floor(Math.random() * body.length)))]
        .filter((cut) => cut > 0)
        .sort((a, b) => a - b);
      expect(await parse(body, cuts)).toEqual(expected);
    }
  });
});
