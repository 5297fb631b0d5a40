import { parentPort, workerData } from 'node:worker_threads';
import { analyzeBuffer } from './content';
import type { Detected } from './sniff';

/** Entry of the analysis worker (see index.ts): parses `workerData.data` and posts the facts. */
interface AnalyzeInput {
  data: Uint8Array;
  extension: string;
  detected: Detected | null;
  render: boolean;
}

async function run(port: NonNullable<typeof parentPort>): Promise<void> {
  const input = workerData as AnalyzeInput;
  const facts = await analyzeBuffer(
    Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength),
    input.extension,
    input.detected,
    input.render,
  );
  const transfer = facts.renders
    ? [facts.renders.preview.pixels.buffer, facts.renders.thumbnail.pixels.buffer]
    : [];
  port.postMessage(facts, transfer as ArrayBuffer[]);
}

if (parentPort) void run(parentPort);
