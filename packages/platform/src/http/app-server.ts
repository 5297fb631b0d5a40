import { createServer, IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';

interface ServerClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

const classesOf = new WeakMap<Express, ServerClasses>();

/** Takes over an HTTP upgrade request (a WebSocket handshake) of its path. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

const upgradesOf = new WeakMap<Express, Map<string, UpgradeHandler>>();

/** Routes upgrade requests of `path` (query string aside) to `handler` on the app's servers. */
export function onUpgrade(app: Express, path: string, handler: UpgradeHandler): void {
  const handlers = upgradesOf.get(app) ?? new Map<string, UpgradeHandler>();
  handlers.set(path, handler);
  upgradesOf.set(app, handlers);
}

/** Upgrade requests to a path nobody took: answered 404 and closed. */
function dispatchUpgrade(app: Express, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const path = (req.url ?? '/').split('?')[0];
  const handler = upgradesOf.get(app)?.get(path);
  if (handler) {
    handler(req, socket, head);
    return;
  }
  socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
}

/**
 * Request and response classes whose prototypes are the app's: subclasses of node's (so instances
 * get node's in-object layout), re-parented onto the app's request and response prototypes, which
 * then become the subclasses' own (express sets every request's prototype to `app.request`).
 */
function serverClasses(app: Express): ServerClasses {
  let classes = classesOf.get(app);
  if (!classes) {
    class AppRequest extends IncomingMessage {}
    class AppResponse extends ServerResponse {}
    Object.setPrototypeOf(AppRequest.prototype, app.request);
    Object.setPrototypeOf(AppResponse.prototype, app.response);
    // The subclasses' prototypes now inherit everything of the app's: they take their place.
    app.request = AppRequest.prototype as Express['request'];
    app.response = AppResponse.prototype as Express['response'];
    classes = {
      IncomingMessage: AppRequest,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
    };
    classesOf.set(app, classes);
  }
  return classes;
}

/**
 * The HTTP server of an express app, whose requests and responses are born with the app's
 * prototypes. Express otherwise swaps each one's prototype on entry (`Object.setPrototypeOf`), which
 * gives every request and response a hidden class of its own: about 2 KB more per open connection
 * (an SSE stream keeps both) and property accesses that never stay monomorphic
 * (expressjs/express#5998). With the prototype already in place the swap does nothing. Upgrade
 * requests go to the handlers registered with `onUpgrade`.
 */
export function createAppServer(app: Express): Server {
  const server = createServer(serverClasses(app), app);
  server.on('upgrade', (req, socket, head) => dispatchUpgrade(app, req, socket, head));
  return server;
}
