import { Type } from 'class-transformer';
import {
  IsHexadecimal,
  IsIn,
  IsInt,
  IsISO8601,
  IsNumberString,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { type Page, PageOf, PageQuery } from './paging';
import { Nullable } from './schema';

/** `POST .../system/probes`: send a probe through the outbox and the bus to the other service. */
export class CreateBusProbeRequest {
  /** Free text carried with the probe (shows up on the receiving side). */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  note?: string;
}

export class BusProbeStorage {
  @IsString()
  key: string;

  @IsString()
  sha256: string;
}

/** One probe as recorded by the service answering: sent from here, or received here. */
export class BusProbe {
  @IsUUID('7')
  id: string;

  @IsIn(['sent', 'received'])
  direction: 'sent' | 'received';

  /** The service that sent it. */
  @IsString()
  origin: string;

  @IsString()
  note: string;

  @IsISO8601()
  sentAt: string;

  /** When this service consumed it (received probes only). */
  @IsISO8601()
  @Nullable()
  receivedAt: string | null;

  /** The object the sender wrote to its blob store for this probe (sent probes only). */
  @ValidateNested()
  @Type(() => BusProbeStorage)
  @Nullable()
  storage: BusProbeStorage | null;
}

export class ListBusProbesQuery extends PageQuery {}

export const BusProbeList = PageOf(BusProbe, 'BusProbeList');
export type BusProbeList = Page<BusProbe>;

/** `GET .../system/dead-letters`: a page of the service's dead letters, newest first. */
export class ListDeadLettersQuery extends PageQuery {
  /** Only this consumer queue, `<service>.<consumer>` (e.g. `collab-service.bus-probe`). */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  queue?: string;

  /** `false`: only those not replayed yet; `true`: only replayed ones. Default both. */
  @IsOptional()
  @IsIn(['true', 'false'])
  replayed?: 'true' | 'false';
}

/**
 * A message a consumer gave up on (its attempts ran out, or it was not a valid envelope), kept in the
 * service's database by the in-process bus. `POST .../dead-letters/{id}/replay` hands it to the
 * consumer once more.
 */
export class DeadLetterMessage {
  @IsUUID()
  id: string;

  /** Consumer queue it died in, `<service>.<consumer>`. */
  @IsString()
  queue: string;

  @IsString()
  routingKey: string;

  /** Id of the event, when the body was a valid envelope. */
  @IsUUID()
  @Nullable()
  eventId: string | null;

  /** The body as delivered. */
  @IsString()
  content: string;

  /** The decoded envelope; null when the body was not one. */
  @IsObject()
  @Nullable()
  envelope: Record<string, unknown> | null;

  /** Deliveries made before it was given up. */
  @IsInt()
  @Min(1)
  attempts: number;

  /** The last failure. */
  @IsString()
  error: string;

  @IsISO8601()
  deadLetteredAt: string;

  /** When an operator replayed it; null until then. A dead letter is replayed at most once. */
  @IsISO8601()
  @Nullable()
  replayedAt: string | null;
}

export const DeadLetterList = PageOf(DeadLetterMessage, 'DeadLetterList');
export type DeadLetterList = Page<DeadLetterMessage>;

/** Payload of `system.probe.v1`. */
export interface SystemProbeData {
  probeId: string;
  origin: string;
  note: string;
  sentAt: string;
}

/** Query of a local-folder pre-signed blob URL (`/blobs/{key}` on the API host, `/v1/blobs/{key}` on collab). */
export class PresignedBlobQuery {
  /** Expiry, epoch milliseconds. */
  @IsNumberString()
  expires: string;

  /** Hex HMAC-SHA256 over method, key, expiry and the optional fields. */
  @IsHexadecimal()
  sig: string;

  @IsOptional()
  @IsString()
  uploadId?: string;

  @IsOptional()
  @IsNumberString()
  partNumber?: string;

  @IsOptional()
  @IsString()
  contentType?: string;

  /** A part URL's exact byte count (signed): a PUT of another Content-Length is refused (403). */
  @IsOptional()
  @IsNumberString()
  size?: string;
}
