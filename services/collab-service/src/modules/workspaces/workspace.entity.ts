import type { WorkspaceRole } from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'workspaces' })
export class WorkspaceEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  @Column({ name: 'created_by', type: 'uuid' })
  createdBy: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity({ name: 'workspace_members' })
export class WorkspaceMemberEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column('text')
  role: WorkspaceRole;

  @Column({ name: 'joined_at', type: 'timestamptz' })
  joinedAt: Date;
}
