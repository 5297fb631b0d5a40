import { createServer, IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Express } from 'express';

interface ServerClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

const classesOf = new WeakMap<Express, ServerClasses>();

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
 * (expressjs/express#5998). With the prototype already in place the swap does nothing.
 */
export function createAppServer(app: Express): Server {
  return createServer(serverClasses(app), app);
}
