import type { Server } from 'node:http';
import supertest, { type Response, type Test } from 'supertest';
import { OpenApiResponses } from './openapi-responses';

type Callback = (error: Error | null, res?: Response) => void;
type App = (...args: unknown[]) => void;
/** What of supertest's Test the hook uses; `assert` runs the expectations once the answer is in. */
interface HookedTest {
  app: Server | string;
  method: string;
  url: string;
  assert(resError: Error | null, res: Response | undefined, fn?: Callback): void;
  [SKIP]?: string;
}

const SKIP = Symbol('hwp.responseValidation.skip');
const INSTALLED = Symbol.for('hwp.responseValidation.installed');

/**
 * The checker of each app's own /openapi.json, fetched once per app: null when the app serves none
 * (404, or not an OpenAPI document); any other failure to read it fails the request.
 */
const documents = new WeakMap<object, Promise<OpenApiResponses | null>>();

/** The express app behind the server supertest made for it (`request(app)`) or was given. */
function appOf(test: HookedTest): App | null {
  if (typeof test.app !== 'object' || test.app === null) return null;
  const [listener] = test.app.listeners('request') as App[];
  return typeof listener === 'function' && 'handle' in listener ? listener : null;
}

function documentOf(app: App): Promise<OpenApiResponses | null> {
  let pending = documents.get(app);
  if (!pending) {
    const fetch = supertest(app).get('/openapi.json');
    (fetch as unknown as HookedTest)[SKIP] = 'the document itself';
    pending = fetch.then((res) => {
      if (res.status === 404) return null;
      if (res.status !== 200)
        throw new Error(`GET /openapi.json of the app answered ${res.status}: ${res.text}`);
      return typeof res.body?.openapi === 'string' ? new OpenApiResponses(res.body) : null;
    });
    documents.set(app, pending);
  }
  return pending;
}

async function problemOf(test: HookedTest, res: Response): Promise<string | null> {
  // A HEAD answer never has a body (RFC 9110): only its status could be checked, and GET's is.
  if (test.method.toUpperCase() === 'HEAD') return null;
  const app = appOf(test);
  if (!app) return null;
  const responses = await documentOf(app);
  if (!responses) return null;
  return responses.check({
    method: test.method,
    path: new URL(test.url).pathname,
    status: res.status,
    contentType: String(res.headers['content-type'] ?? ''),
    text: typeof res.text === 'string' ? res.text : '',
    body: res.body,
  });
}

/** The failure, without a stack: it would point into this hook, not at the test. */
function mismatch(message: string): Error {
  const error = new Error(message);
  error.stack = `Error: ${message}`;
  return error;
}

function shorten(body: unknown): string {
  const text = JSON.stringify(body, null, 2) ?? String(body);
  return text.length > 2_000 ? `${text.slice(0, 2_000)}\n... (${text.length} characters)` : text;
}

/**
 * Makes every supertest request of a test file check its answer against the OpenAPI document of
 * the app it was sent to (`GET /openapi.json`, fetched once per app): status and JSON body must
 * match the operation's documented response, and an error status the operation does not list must
 * carry the shared error body. A mismatch fails the request (its promise rejects, its `end`
 * callback gets the error) after the test's own expectations passed. Answers the document says
 * nothing about (paths it does not list, non-JSON media types, apps without a document) pass.
 * Installed for every test file by jest's `setupFilesAfterEnv`.
 */
export function installResponseValidation(): void {
  const prototype = supertest.Test.prototype as unknown as HookedTest & Record<symbol, unknown>;
  if (prototype[INSTALLED]) return;
  prototype[INSTALLED] = true;
  const assert = prototype.assert;
  prototype.assert = function (this: HookedTest, resError, res, fn) {
    if (!res || !fn || this[SKIP]) return assert.call(this, resError, res, fn);
    assert.call(this, resError, res, (error, response) => {
      if (error || !response) return fn.call(this, error, response);
      problemOf(this, response).then(
        (problem) =>
          fn.call(this, problem ? mismatch(`${problem}\nBody: ${shorten(response.body)}`) : null, response),
        (failure: unknown) =>
          fn.call(this, failure instanceof Error ? failure : new Error(String(failure)), response),
      );
    });
  };
}

/**
 * Sends `test` without checking its answer against the document: for the few tests that provoke
 * an answer the document rightly does not describe. `reason` says which (it is kept for debugging).
 */
export function unvalidated<T extends Test>(test: T, reason: string): T {
  (test as unknown as HookedTest)[SKIP] = reason;
  return test;
}
