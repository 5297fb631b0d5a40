export * from './database';
export * from './eventually';
export * from './s3rver';
export * from './tcp-proxy';
export * from './service';
