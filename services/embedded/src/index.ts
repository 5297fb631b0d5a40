export * from './config';
export * from './config-docs';
