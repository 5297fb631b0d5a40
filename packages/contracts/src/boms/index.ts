/** BOM contracts (sections 2.9 and 4.7; DECISIONS.md sections 0 and 5): one module per use case. */
export * from './bom-constants';
export * from './bom-diff.dto';
export * from './bom-effectivity.dto';
export * from './bom-header.dto';
export * from './bom-import.dto';
export * from './bom-lines.dto';
export * from './bom-rollup.dto';
export * from './bom-settings.dto';
export * from './bom-tree.dto';
export * from './bom-where-used.dto';
