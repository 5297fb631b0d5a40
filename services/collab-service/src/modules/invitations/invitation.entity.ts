import type { WorkspaceRole } from '@hwp/contracts';
import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** What is stored; `expired` is derived (pending and past `expiresAt`). */
export type StoredInvitationStatus = 'pending' | 'accepted' | 'revoked';

/**
 * An invitation to join a workspace with a role. Only the sha256 of its code is kept: the code
 * itself exists in the email and in the sender's answer.
 */
@Entity({ name: 'invitations' })
@Check(`role IN ('viewer', 'engineer', 'manager', 'owner')`)
@Check(`status IN ('pending', 'accepted', 'revoked')`)
@Check('invitations_expiry_check', 'expires_at > created_at')
@Check('invitations_accepted_check', `(status = 'accepted') = (accepted_at IS NOT NULL)`)
// The migration also indexes lower(email) and keeps one pending row per workspace and address
// (partial unique index on lower(email)), which the decorators cannot say.
@Index('invitations_workspace_created_idx', ['workspaceId', 'createdAt'])
@Index('invitations_inviter_created_idx', ['invitedBy', 'createdAt'])
export class InvitationEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  /** As the sender typed it (trimmed); compared case-insensitively. */
  @Column('text')
  email: string;

  @Column('text')
  role: WorkspaceRole;

  /** Hex sha256 of the code. */
  @Column({ name: 'code_hash', type: 'text', unique: true })
  codeHash: string;

  @Column({ name: 'invited_by', type: 'uuid' })
  invitedBy: string;

  /** The name shown in the email and in listings. */
  @Column({ name: 'invited_by_name', type: 'text' })
  invitedByName: string;

  @Column({ type: 'text', default: 'pending' })
  status: StoredInvitationStatus;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'accepted_at', type: 'timestamptz', nullable: true })
  acceptedAt: Date | null;

  @Column({ name: 'accepted_by', type: 'uuid', nullable: true })
  acceptedBy: string | null;
}
