import type { CreatePartRequest, Part, PartList } from '@hwp/contracts';
import { collabAs, type Stack, type Team, type TestUser, teamWorkspace } from './collab-test-kit';
import { createPart } from './factories';

/**
 * What the tests of src/modules/parts share, bound to their file's stack (`stackOf` is read when a
 * helper runs, after the file's beforeAll has started it).
 */
export function partsKit(stackOf: () => Stack) {
  const as = (user: TestUser) => collabAs(stackOf().collab.app, user);
  return {
    as,
    /** A fresh workspace with a member of each role. */
    team: (): Promise<Team> => teamWorkspace(stackOf(), 'parts'),
    /**
     * A part made by the team's engineer with the platform's factory: named `Part` and numbered by the
     * workspace's rules unless `body` says otherwise (any field of the request, snake_case too).
     */
    createPart: (t: Team, body: Record<string, unknown> = {}): Promise<Part> =>
      createPart(stackOf().collab.app, t.engineer, t.workspace, {
        partNumber: undefined,
        name: 'Part',
        ...body,
      } as Partial<CreatePartRequest>),
    /** A page of the team's parts, as its viewer reads it. */
    async list(t: Team, query: Record<string, unknown>): Promise<PartList> {
      const res = await as(t.viewer)
        .get('/v1/parts')
        .query({ workspace: t.workspace, ...query });
      expect(res.status).toBe(200);
      return res.body as PartList;
    },
  };
}

/** The part numbers of a page, in its order. */
export const numbers = (page: PartList) => page.items.map((p) => p.partNumber);
