// biome-ignore-all assist/source/organizeImports: evaluation order is the order of the OpenAPI schemas
// Part contracts, one module per use case; this entry keeps every name importable from './parts'.
export * from './part-constants';
export * from './approval.dto';
export * from './part.dto';
export * from './part-version.dto';
export * from './bom-settings.dto';
export * from './part-import.dto';
export * from './bom.dto';
