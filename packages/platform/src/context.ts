import { AsyncLocalStorage } from 'node:async_hooks';

/** What one request carries through its async work; the logger reads it. */
export interface RequestContext {
  requestId: string;
  userId?: string;
  tenantId?: string;
  workspace?: string;
  /** W3C `traceparent` of the current position (the request's span, or the one passed in). */
  traceparent?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}
