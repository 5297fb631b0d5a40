import { createServer, IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * The HTTP server of an express app, whose requests and responses are born with the app's
 * prototypes. Express otherwise swaps each one's prototype on entry (`Object.setPrototypeOf`), which
 * gives every request and response a hidden class of its own: about 2 KB more per open connection
 * (an SSE stream keeps both) and property accesses that never stay monomorphic
 * (expressjs/express#5998). With the prototype already in place the swap does nothing.
 */
export function createAppServer(app: Express): Server {
  function AppRequest(this: IncomingMessage, socket: Socket) {
    IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  // node:http passes options (the socket's high-water mark) as a second argument.
  function AppResponse(this: ServerResponse, req: IncomingMessage, options?: unknown) {
    (
      ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: unknown) => void
    ).call(this, req, options);
  }
  AppResponse.prototype = app.response;
  return createServer(
    {
      IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
    },
    app,
  );
}
