/** What every area shares: error codes and the error body, paging, schema helpers, health and operations. */

export * from './error-body.dto';
export * from './errors';
export * from './health';
export * from './ops';
export * from './paging';
export * from './schema';
