import type * as Xlsx from 'xlsx';

let loaded: typeof Xlsx | undefined;

/**
 * SheetJS, loaded by the first XLSX file read or written rather than at start: it holds about 30 MB
 * resident, which CSV imports, exports and every other request never need.
 */
export function xlsx(): typeof Xlsx {
  loaded ??= require('xlsx') as typeof Xlsx;
  return loaded;
}
