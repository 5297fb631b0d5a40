import type { EventEmitter } from 'node:events';

/**
 * Resolves when `full` (a response, or its socket) has drained, or `response` closed (the client
 * went away), whichever comes first; both listeners are removed either way, so a long stream that
 * waits many times leaves none behind.
 */
export function drainedOrClosed(full: EventEmitter, response: EventEmitter = full): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      full.off('drain', done);
      response.off('close', done);
      resolve();
    };
    full.on('drain', done);
    response.on('close', done);
  });
}
