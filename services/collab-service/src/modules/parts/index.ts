/**
 * What other features may use of the parts catalog, and nothing else in this folder is reached from
 * outside it. Its services come built, as the feature's exports (`PartsExports`: a feature that lists
 * `parts` in its needs gets them); from here come their types, the tables other features read parts
 * from (BOM lines name parts and versions) and the approval flow BOMs share with part versions
 * (DECISIONS.md section 5).
 */
export { ApprovalColumns, approvalActors, notSubmitted, presentApproval } from './approval-columns';
export { checkMove, MOVES, type Move, PAST } from './approval-flow';
export type { BomSettingsService } from './bom-settings.service';
export { PartEntity, PartVersionEntity } from './part.entity';
export type { PartsExports } from './parts.feature';
export type { CatalogPart, PartsService } from './parts.service';
