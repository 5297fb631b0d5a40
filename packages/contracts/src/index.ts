export * from './error-body.dto';
export * from './errors';
export * from './events';
export * from './health';
export * from './ops';
