import { BrepMemoryError, capWasmMemory, stepBoxes, tessellate } from './index';

// Issue 34, finding 5: OpenCascade's WebAssembly heap (up to 2 GB) is outside a worker thread's heap
// limit; capped, a file that needs more is refused as such, not read as a file without geometry.
afterAll(() => capWasmMemory(4096));

test('past the WebAssembly memory cap, reading a STEP file throws BrepMemoryError', async () => {
  const small = Buffer.from(stepBoxes([{ at: [0, 0, 0], size: [1, 1, 1] }]));
  expect((await tessellate(small, 'step'))?.triangles).toBe(12);
  capWasmMemory(64);
  const boxes = Array.from({ length: 2000 }, (_, i) => ({
    at: [i * 2, 0, 0] as [number, number, number],
    size: [1, 1, 1] as [number, number, number],
  }));
  const large = Buffer.from(stepBoxes(boxes));
  await expect(tessellate(large, 'step')).rejects.toThrow(BrepMemoryError);
  await expect(tessellate(large, 'step')).rejects.toThrow(
    'OpenCascade needed more than 64 MB of WebAssembly memory it may use',
  );
});
