import { PART_VERSION_STATUSES, type PartVersionStatus } from '../parts/part-constants';

/** BOM contracts (sections 2.9 and 4.7 of the interface; DECISIONS.md sections 0 and 5). */

export const BOM_TYPES = ['engineering', 'manufacturing'] as const;
export type BomType = (typeof BOM_TYPES)[number];
export type BomStatus = PartVersionStatus;
export const BOM_STATUSES = PART_VERSION_STATUSES;
export const ALTERNATE_APPROVALS = ['approved', 'conditional', 'rejected'] as const;
export type AlternateApproval = (typeof ALTERNATE_APPROVALS)[number];
export const BOM_ITEM_OPS = ['upsert', 'delete'] as const;
/** Items of one BOM document; one `POST /items` call changes at most this many lines. */
export const MAX_BOM_ITEMS = 10_000;
/** Reference designators one line may expand to (`R1-R5000`). */
export const MAX_REFDES = 10_000;
/** Characters of one line's designator text (or of its list, all entries together). */
export const MAX_REFDES_TEXT = 20_000;
/** Reference designators one import file or one change of lines may hold in all (counted before expanding). */
export const MAX_REFDES_PER_BOM = 100_000;

/** Snake_case spellings of the interface document accepted on BOM requests (DECISIONS.md section 0). */
export const BOM_SNAKE_CASE_FIELDS = {
  assembly_part_id: 'assemblyPartId',
  assembly_version_id: 'assemblyVersionId',
  change_note: 'changeNote',
  parent_item_id: 'parentItemId',
  child_part_id: 'childPartId',
  child_part_number: 'childPartNumber',
  child_version_id: 'childVersionId',
  sort_index: 'sortIndex',
  date_from: 'dateFrom',
  date_to: 'dateTo',
  serial_from: 'serialFrom',
  serial_to: 'serialTo',
  lot_from: 'lotFrom',
  lot_to: 'lotTo',
  part_id: 'partId',
  item_id: 'itemId',
} as const;
