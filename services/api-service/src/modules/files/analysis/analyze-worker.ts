import { parentPort, workerData } from 'node:worker_threads';
import { capWasmMemory } from '@hwp/geometry';
import { analyzeBuffer } from './content';
import type { Detected } from './sniff';

/** Entry of the analysis worker (see index.ts): parses `workerData.data` and posts the facts. */
interface AnalyzeInput {
  data: Uint8Array;
  extension: string;
  detected: Detected | null;
  render: boolean;
  /** The cap of WebAssembly memory (OpenCascade's), which the worker's heap limit does not count. */
  wasmMb?: number;
}

async function run(port: NonNullable<typeof parentPort>): Promise<void> {
  const input = workerData as AnalyzeInput;
  if (input.wasmMb) capWasmMemory(input.wasmMb);
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
