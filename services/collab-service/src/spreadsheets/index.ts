/**
 * The untrusted-spreadsheet reader the imports share (parts, BOMs): format detection, a parse worker
 * with memory, time and row limits, cell readers and header matching. No routes, no database.
 */
export { type CellResult, parseBoolean, parseDecimal, parseJsonObject, splitTags } from './cell-values';
export { type HeaderMapping, headerKey, normaliseHeaders } from './headers';
export {
  type CellError,
  openSpreadsheet,
  type ParsedSheet,
  type ParseSpreadsheetInput,
  type ParseSpreadsheetOptions,
  parseSpreadsheet,
  type SheetFormat,
  SPREADSHEET_DEFAULTS,
  SpreadsheetError,
  type SpreadsheetStream,
} from './parse-spreadsheet';
