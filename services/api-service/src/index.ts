export * from './app';
export * from './config';
export * from './service';
