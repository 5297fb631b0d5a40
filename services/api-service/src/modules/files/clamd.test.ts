import { Readable } from 'node:stream';
import { EICAR, type RunningClamd, startClamd } from '#test/clamd';
import { ClamdClient, ClamdUnavailableError, parseAnswer } from './clamd';

let clamd: RunningClamd;
beforeAll(async () => {
  clamd = await startClamd();
}, 60_000);
afterAll(() => clamd?.stop());

describe('ClamdClient against a real clamd', () => {
  test('EICAR is found, other bytes are clean, streamed in chunks', async () => {
    const client = new ClamdClient(clamd.host, clamd.port);
    await client.ping();
    expect(await client.scan(Readable.from([Buffer.from(EICAR)]))).toEqual({
      infected: true,
      signature: expect.stringMatching(/\S/),
    });
    const big = Buffer.alloc(300_000, 7);
    expect(await client.scan(Readable.from([big.subarray(0, 100_000), big.subarray(100_000)]))).toEqual({
      infected: false,
    });
  });

  test('an unreachable clamd is an error to fail closed on, never a clean verdict', async () => {
    const client = new ClamdClient('127.0.0.1', 1, 2_000);
    await expect(client.scan(Readable.from([Buffer.from('x')]))).rejects.toBeInstanceOf(
      ClamdUnavailableError,
    );
    expect(() => parseAnswer('INSTREAM size limit exceeded. ERROR')).toThrow(ClamdUnavailableError);
  });
});
