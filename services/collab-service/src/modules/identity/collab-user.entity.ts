import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A collaboration user (DECISIONS.md section 4): the API host's user, with a username for paths. */
@Entity({ name: 'collab_users' })
export class CollabUserEntity {
  /** The API host's user id (token `sub`). */
  @PrimaryColumn('uuid')
  id: string;

  @Column('text', { default: '' })
  email: string;

  @Column('text')
  username: string;

  @Column({ name: 'display_name', type: 'text', default: '' })
  displayName: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
