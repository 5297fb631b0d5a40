import type { Bom } from '@hwp/contracts';
import { drainedOrClosed } from '@hwp/platform';
import type { Response } from 'express';
import { type LineFacts, lineNodeFields, type TreeWalk } from './bom-walk';

/** Bytes of JSON gathered before a socket write. */
const CHUNK_CHARS = 256 * 1024;

/**
 * Writes `{ ...header, tree: [nodes] }` (BomDetail) as the walk yields its nodes: what a node shows of
 * its line is turned into JSON once per line, each occurrence adds its own four fields, and chunks
 * go out as they fill, waiting whenever the socket is full. The same JSON `JSON.stringify` gives
 * for the object, without the object: a 20,000-line tree is 20 MB of text.
 */
export async function streamBomDetail(res: Response, header: Bom, walk: TreeWalk): Promise<void> {
  const lineJson = new Map<LineFacts, string>();
  const write = async (chunk: string) => {
    if (!res.write(chunk)) await drainedOrClosed(res);
  };
  res.status(200).type('application/json');
  let chunk = `${JSON.stringify(header).slice(0, -1)}${Object.keys(header).length > 0 ? ',' : ''}"tree":[`;
  let first = true;
  for (const occurrence of walk.occurrences()) {
    if (res.destroyed) return;
    let fields = lineJson.get(occurrence.facts);
    if (fields === undefined) {
      fields = JSON.stringify(lineNodeFields(occurrence.facts)).slice(1, -1);
      lineJson.set(occurrence.facts, fields);
    }
    const parent = occurrence.parentNodeId === null ? 'null' : `"${occurrence.parentNodeId}"`;
    chunk += `${first ? '' : ','}{"nodeId":"${occurrence.nodeId}","parentNodeId":${parent},"level":${occurrence.level},"extendedQty":${occurrence.extendedQty},${fields}}`;
    first = false;
    if (chunk.length >= CHUNK_CHARS) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(`${chunk}]}`);
  res.end();
}
