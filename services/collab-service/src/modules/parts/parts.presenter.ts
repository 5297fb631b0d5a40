import type { Part, PartHistoryEntry, PartVersion } from '@hwp/contracts';
import { approvalActors, presentApproval } from './approval-columns';
import type { PartEntity, PartHistoryEntity, PartVersionEntity } from './part.entity';

export function presentPart(row: PartEntity, workspace: string, names: Map<string, string>): Part {
  return {
    id: row.id,
    workspace,
    partNumber: row.partNumber,
    name: row.name,
    description: row.description,
    domain: row.domain,
    uom: row.uom,
    lifecycle: row.lifecycle,
    tags: row.tags,
    attributes: row.attributes,
    manufacturerName: row.manufacturerName,
    manufacturerPartNumber: row.manufacturerPartNumber,
    unitCost: row.unitCost,
    currency: row.currency,
    rohsCompliant: row.rohsCompliant,
    reachCompliant: row.reachCompliant,
    conflictMinerals: row.conflictMinerals,
    createdBy: names.get(row.createdBy) ?? '',
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function presentVersion(row: PartVersionEntity, names: Map<string, string>): PartVersion {
  return {
    id: row.id,
    partId: row.partId,
    revision: row.revision,
    status: row.status,
    changeNote: row.changeNote,
    data: row.data,
    createdBy: names.get(row.createdBy) ?? '',
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...presentApproval(row, names),
  };
}

export function presentHistory(row: PartHistoryEntity, names: Map<string, string>): PartHistoryEntry {
  return {
    id: row.id,
    actor: names.get(row.actor) ?? '',
    at: row.at.toISOString(),
    action: row.action,
    changes: row.changes,
  };
}

/** Versions' user ids, for `usernames`. */
export const versionActors = approvalActors;
