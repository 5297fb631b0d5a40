import type { Express } from 'express';
import type { Response } from 'supertest';
import { as, type TestUser } from './api-test-kit';

export type WriteMethod = 'put' | 'patch' | 'post' | 'delete';

export interface TenantWrite {
  method: WriteMethod;
  path: string;
  body?: object;
}

export interface TenantList {
  /** A list route of the outsider (`{ items, total, page, pageSize }`), e.g. `/tenants`. */
  path: string;
  /** The resource ids a page lists. */
  // biome-ignore lint/suspicious/noExplicitAny: callers pick fields of their own list body shape
  ids: (body: any) => string[];
}

export interface TenantIsolationSpec {
  /** Member of tenant A who can see the resource. */
  owner: TestUser;
  /** A user who is not a member of tenant A. */
  outsider: TestUser;
  /** Tenant A. */
  tenantId: string;
  /** The resource of tenant A that must not leak. */
  resourceId: string;
  /** Paths the owner reads (200) and the outsider must not see (404 `not_found`). */
  reads: string[];
  /** Writes the outsider must not perform (404 `not_found`); the owner's reads stay unchanged. */
  writes?: TenantWrite[];
  /** The outsider's own lists: no page, up to the end, contains `resourceId`. */
  lists: TenantList[];
}

/** Pages one list walks at most (a guard against a `total` that never ends). */
const MAX_PAGES = 20;

function show(method: string, path: string, res: Response): string {
  return `${method.toUpperCase()} ${path} -> ${res.status} ${JSON.stringify(res.body)}`;
}

function expectError(method: string, path: string, res: Response, status: number, code: string): void {
  const where = show(method, path, res);
  if (res.status !== status || res.body?.code !== code) {
    throw new Error(`expected ${status} ${code}: ${where}`);
  }
  for (const field of ['detail', 'path', 'timestamp']) {
    if (typeof res.body[field] !== 'string') throw new Error(`error body without ${field}: ${where}`);
  }
}

function withPage(path: string, page: number, pageSize?: number): string {
  const url = new URL(path, 'http://isolation.test');
  url.searchParams.set('page', String(page));
  if (pageSize !== undefined) url.searchParams.set('pageSize', String(pageSize));
  return `${url.pathname}${url.search}`;
}

/**
 * Checks that a tenant-scoped resource of tenant A never reaches a user outside A (DECISIONS.md
 * section 0: another tenant's resource answers 404, never revealing it exists):
 * - the owner reads every read path (200), so the checks below are not vacuous;
 * - the outsider gets 404 `not_found` on every read and every write, and the writes change nothing
 *   the owner reads;
 * - the outsider's lists, walked page by page to the end and one page past it, never contain the
 *   resource; with `X-Tenant-ID: <A>` the outsider gets 403 `forbidden` on each list.
 */
export async function expectTenantIsolation(app: Express, spec: TenantIsolationSpec): Promise<void> {
  const owner = as(app, spec.owner);
  const outsider = as(app, spec.outsider);

  const ownerReads = async () => {
    const bodies: unknown[] = [];
    for (const path of spec.reads) {
      const res = await owner.get(path);
      if (res.status !== 200) throw new Error(`the owner cannot read: ${show('get', path, res)}`);
      bodies.push(res.body);
    }
    return bodies;
  };
  const before = await ownerReads();

  for (const path of spec.reads) {
    expectError('get', path, await outsider.get(path), 404, 'not_found');
  }

  for (const write of spec.writes ?? []) {
    const pending = outsider[write.method](write.path);
    const res = await (write.body === undefined ? pending : pending.send(write.body));
    expectError(write.method, write.path, res, 404, 'not_found');
  }
  if (spec.writes?.length) {
    const after = await ownerReads();
    spec.reads.forEach((path, i) => {
      if (JSON.stringify(after[i]) !== JSON.stringify(before[i])) {
        throw new Error(
          `an outsider's write changed GET ${path}:\nbefore ${JSON.stringify(before[i])}\nafter  ${JSON.stringify(after[i])}`,
        );
      }
    });
  }

  for (const list of spec.lists) {
    let pageSize: number | undefined;
    for (let page = 1; page <= MAX_PAGES; page++) {
      const path = withPage(list.path, page, pageSize);
      const res = await outsider.get(path);
      if (res.status !== 200) throw new Error(`the outsider cannot list: ${show('get', path, res)}`);
      const ids = list.ids(res.body);
      if (!Array.isArray(ids)) throw new Error(`ids() did not return an array for ${path}`);
      if (ids.includes(spec.resourceId)) {
        throw new Error(`${spec.resourceId} of tenant ${spec.tenantId} leaks into ${show('get', path, res)}`);
      }
      const { total } = res.body as { total: number; pageSize: number };
      pageSize = (res.body as { pageSize: number }).pageSize;
      // Walk to the last page, then look at one page past it (it must be empty of the resource too).
      if ((page - 1) * pageSize >= total) break;
      if (page === MAX_PAGES) throw new Error(`${list.path} has more than ${MAX_PAGES} pages`);
    }

    const named = await outsider.get(list.path).set('X-Tenant-ID', spec.tenantId);
    expectError('get', `${list.path} (X-Tenant-ID: ${spec.tenantId})`, named, 403, 'forbidden');
  }
}
