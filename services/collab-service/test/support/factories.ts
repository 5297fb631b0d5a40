import { randomBytes } from 'node:crypto';
import type { CreatePartRequest, Part, PartVersion, PartVersionStatus, Workspace } from '@hwp/contracts';
import { as, type TestUser } from '@hwp/platform/test-kit';
import type { Express } from 'express';

/**
 * Factories of the collaboration host's records, through its public HTTP API (the same checks and
 * events a client meets): a test states what it needs, not how rows are laid out.
 */

function expectStatus(res: { status: number; body: unknown }, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what} failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** A workspace with a fresh name, owned by `owner` (who must be known to the host: `/v1/users/init`). */
export async function createWorkspace(
  collabApp: Express,
  owner: TestUser,
  prefix = 'ws',
): Promise<Workspace> {
  const name = `${prefix}-${randomBytes(5).toString('hex')}`;
  const res = await as(collabApp, owner).post('/v1/workspaces').send({ name });
  expectStatus(res, 201, 'create workspace');
  return res.body as Workspace;
}

/** A part with a fresh part number (overrides win), created by `user` (engineer+). */
export async function createPart(
  collabApp: Express,
  user: TestUser,
  workspace: string,
  overrides: Partial<CreatePartRequest> = {},
): Promise<Part> {
  const res = await as(collabApp, user)
    .post('/v1/parts')
    .send({ workspace, partNumber: `TP-${randomBytes(6).toString('hex')}`, name: 'Test part', ...overrides });
  expectStatus(res, 201, 'create part');
  return res.body as Part;
}

/**
 * A version of the part in `status`, moved there through the review flow: created (draft) and, for
 * later statuses, submitted then approved or rejected by `reviewer` (manager+; `user` by default).
 */
export async function createPartVersion(
  collabApp: Express,
  user: TestUser,
  workspace: string,
  partId: string,
  options: { revision?: string; status?: PartVersionStatus; reviewer?: TestUser } = {},
): Promise<PartVersion> {
  const status = options.status ?? 'draft';
  const created = await as(collabApp, user)
    .post(`/v1/parts/${partId}/versions`)
    .send({ workspace, revision: options.revision ?? 'A' });
  expectStatus(created, 201, 'create version');
  let version = created.body as PartVersion;
  const move = async (by: TestUser, action: string) => {
    const res = await as(collabApp, by)
      .post(`/v1/parts/${partId}/versions/${version.id}/${action}`)
      .send({ workspace });
    expectStatus(res, 200, `${action} version`);
    version = res.body as PartVersion;
  };
  if (status === 'draft') return version;
  await move(user, 'submit');
  if (status === 'approved') await move(options.reviewer ?? user, 'approve');
  if (status === 'rejected') await move(options.reviewer ?? user, 'reject');
  return version;
}
