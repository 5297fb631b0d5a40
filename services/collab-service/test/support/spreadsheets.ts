import { once } from 'node:events';
import { crc32, createDeflateRaw } from 'node:zlib';
import * as XLSX from 'xlsx';

const MB = 1024 * 1024;

/** A workbook with one sheet, written by xlsx itself. */
export function workbook(cells: Record<string, XLSX.CellObject>, ref: string): Buffer {
  const sheet: XLSX.WorkSheet = { '!ref': ref, ...cells };
  return XLSX.write(
    { SheetNames: ['Parts'], Sheets: { Parts: sheet } },
    { type: 'buffer', bookType: 'xlsx' },
  );
}

export interface ZipPart {
  name: string;
  /** The bytes stored in the archive (already deflated for method 8). */
  stored: Buffer;
  method: 0 | 8;
  /** The uncompressed size the headers declare (may lie). */
  size: number;
  crc?: number;
}

/** A ZIP written byte by byte, so its headers can say whatever a test needs. */
export function zip(parts: ZipPart[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const part of parts) {
    const name = Buffer.from(part.name, 'latin1');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(part.method, 8);
    local.writeUInt32LE(part.crc ?? 0, 14);
    local.writeUInt32LE(part.stored.length, 18);
    local.writeUInt32LE(part.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(part.method, 10);
    central.writeUInt32LE(part.crc ?? 0, 16);
    central.writeUInt32LE(part.stored.length, 20);
    central.writeUInt32LE(part.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, part.stored);
    centrals.push(central, name);
    offset += local.length + name.length + part.stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export const storedPart = (name: string, text: string): ZipPart => {
  const data = Buffer.from(text);
  return { name, stored: data, method: 0, size: data.length, crc: crc32(data) };
};
export const XLSX_SKELETON = [
  storedPart('[Content_Types].xml', '<Types/>'),
  storedPart('xl/workbook.xml', '<workbook/>'),
];

/** `bytes` zeros, deflated chunk by chunk (never holding them all). */
export async function deflatedZeros(bytes: number): Promise<Buffer> {
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const zeros = Buffer.alloc(MB);
  for (let written = 0; written < bytes; written += MB) {
    if (!deflate.write(zeros)) await once(deflate, 'drain');
  }
  deflate.end();
  await once(deflate, 'end');
  return Buffer.concat(out);
}
