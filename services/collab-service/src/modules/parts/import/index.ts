/** The untrusted-spreadsheet parser of the parts import (no routes, no database). */
export { type CellResult, parseBoolean, parseDecimal, parseJsonObject, splitTags } from './cell-values';
export {
  type HeaderMapping,
  headerKey,
  normaliseHeaders,
  PART_IMPORT_ALIASES,
  type PartImportField,
} from './header-aliases';
export {
  type CellError,
  type ParsedSheet,
  type ParseSpreadsheetInput,
  type ParseSpreadsheetOptions,
  parseSpreadsheet,
  type SheetFormat,
  SPREADSHEET_DEFAULTS,
  SpreadsheetError,
} from './parse-spreadsheet';
