import type { EntityManager } from 'typeorm';

/** The `bom` and `import.progress` events of the workspace stream. */
export interface BomEvents {
  emit(
    manager: EntityManager,
    workspace: { id: string; name: string },
    type: 'bom' | 'import.progress',
    data: object,
    meta: { actor: { id: string; username: string }; to?: { id: string; username: string } },
  ): Promise<unknown>;
  /** The latest committed change among `bom` and `part` events of a workspace (one indexed read). */
  lastChange(
    manager: EntityManager,
    workspaceId: string,
    types: readonly ('bom' | 'part')[],
  ): Promise<{ id: number; at: Date | null }>;
}

/**
 * What a BOM's tree and exports are made of changes only with a `bom` event (lines, alternates,
 * status, a new BOM, imports) or a `part` event (the parts' fields, versions, imports) of its
 * workspace, each emitted in the transaction of the change.
 */
export const TREE_EVENTS = ['bom', 'part'] as const;
