export * from './database';
export * from './eventually';
export * from './fake-timers';
export * from './s3rver';
export * from './service';
export * from './tcp-proxy';
