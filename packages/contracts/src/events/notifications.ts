import { IsIn, IsISO8601, IsNotEmpty, IsString, IsUUID, MaxLength } from 'class-validator';
import { type Page, PageOf, PageQuery } from '../common/paging';
import { Nullable } from '../common/schema';

/** `GET /dev/mailbox?to=` (development only): what the notifier would have sent. */
export class DevMailboxQuery extends PageQuery {
  /** Email address or phone number (international format). */
  @IsString()
  @IsNotEmpty()
  @MaxLength(254)
  to: string;
}

export class DevMailboxMessage {
  @IsUUID()
  id: string;

  /** The `notification.requested.v1` event it came from. */
  @IsUUID()
  event_id: string;

  @IsIn(['email', 'sms'])
  channel: 'email' | 'sms';

  @IsString()
  to: string;

  @IsString()
  template: string;

  @IsString()
  @Nullable()
  subject: string | null;

  @IsString()
  text: string;

  @IsISO8601()
  created_at: string;
}

/** Newest first. */
export const DevMailboxList = PageOf(DevMailboxMessage, 'DevMailboxList');
export type DevMailboxList = Page<DevMailboxMessage>;
