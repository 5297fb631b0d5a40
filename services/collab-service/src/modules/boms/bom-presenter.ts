import type { Bom } from '@hwp/contracts';
import { presentApproval } from '../parts';
import type { BomEntity } from './bom.entity';

/** A BOM header as answered: its assembly's part number, its line count and the usernames of its actors. */
export function presentBom(
  row: BomEntity,
  workspace: string,
  assemblyPartNumber: string,
  itemCount: number,
  names: Map<string, string>,
): Bom {
  return {
    id: row.id,
    workspace,
    assemblyPartId: row.assemblyPartId,
    assemblyPartNumber,
    assemblyVersionId: row.assemblyVersionId,
    type: row.type,
    revision: row.revision,
    status: row.status,
    changeNote: row.changeNote,
    sourceBomId: row.sourceBomId,
    itemCount,
    createdBy: names.get(row.createdBy) ?? '',
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...presentApproval(row, names),
  };
}
