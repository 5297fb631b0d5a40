import type { TranslationStatusEntry } from '@hwp/contracts';
import { expectEventually, listen } from '@hwp/platform/test-kit';
import { type Stack, startStack, type Team, teamWorkspace } from './collab-test-kit';
import { filesKit } from './shared-files-kit';

/**
 * The setup the viewer test files (src/modules/viewer) share: a stack with a short translation
 * lease, a team workspace and the engineer's folder, and requests for a translation, its settled
 * state and the lookup. The fields are set by the `beforeAll` it registers (call it at the top of a
 * test file, before any other hook). Here, not next to them: src is built, and this is test code.
 */
export function viewerTestKit(prefix: string) {
  const viewer = {
    stack: undefined as unknown as Stack,
    server: undefined as unknown as Awaited<ReturnType<typeof listen>>,
    t: undefined as unknown as Team,
    kit: undefined as unknown as ReturnType<typeof filesKit>,
    folder: '',

    translate: (filename: string, extra: Record<string, unknown> = {}) =>
      viewer.kit
        .as(viewer.t.viewer)
        .post('/api/viewer/translate-file')
        .send({ workspace: viewer.t.workspace, filename: `${viewer.folder}/${filename}`, ...extra }),

    settled: (modelId: string): Promise<TranslationStatusEntry> =>
      expectEventually(
        async () => {
          const map = await viewer.kit
            .as(viewer.t.viewer)
            .get('/api/viewer/status-map')
            .query({ workspace: viewer.t.workspace })
            .expect(200);
          const entry = (map.body as TranslationStatusEntry[]).find((e) => e.modelId === modelId);
          if (!entry || entry.status === 'pending' || entry.status === 'inprogress')
            throw new Error(`not finished: ${JSON.stringify(entry)}`);
          return entry;
        },
        { timeoutMs: 30_000 },
      ),

    lookup: (filename: string, extra: Record<string, unknown> = {}) =>
      viewer.kit
        .as(viewer.t.viewer)
        .get('/api/viewer/models/lookup')
        .query({ workspace: viewer.t.workspace, filename: `${viewer.folder}/${filename}`, ...extra }),
  };

  beforeAll(async () => {
    // A short lease: a job whose process died is swept within about two seconds.
    viewer.stack = await startStack({
      collab: {
        UPLOADS_PER_MINUTE: '1000',
        TRANSLATION_LEASE_MS: '1500',
        // Where clients reach the host, whatever address the test's requests use (issue 35).
        PUBLIC_COLLAB_URL: 'https://collab.example.test',
      },
    });
    viewer.server = await listen(viewer.stack.collab.app);
    viewer.t = await teamWorkspace(viewer.stack, prefix);
    viewer.kit = filesKit(viewer.stack, viewer.t);
    viewer.folder = await viewer.kit.username(viewer.t.engineer);
  }, 60_000);
  afterAll(async () => {
    await viewer.server?.close();
    await viewer.stack?.stop();
  });

  return viewer;
}
