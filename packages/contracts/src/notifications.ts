import { Type } from 'class-transformer';
import {
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { Nullable } from './schema';

/** `GET /dev/mailbox?to=` (development only): what the notifier would have sent. */
export class DevMailboxQuery {
  /** Email address or phone number (international format). */
  @IsString()
  @IsNotEmpty()
  @MaxLength(254)
  to: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  page?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(500)
  pageSize?: number;
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
export class DevMailboxList {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => DevMailboxMessage)
  items: DevMailboxMessage[];

  @IsInt()
  total: number;

  @IsInt()
  page: number;

  @IsInt()
  pageSize: number;
}
