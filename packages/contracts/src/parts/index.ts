/** Part contracts (sections 2.8, 2.10, 3.3): one module per use case. */

export * from './approval.dto';
export * from './part.dto';
export * from './part-constants';
export * from './part-import.dto';
export * from './part-version.dto';
