import { Type } from 'class-transformer';
import {
  IsHexadecimal,
  IsIn,
  IsISO8601,
  IsNumberString,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { type Page, PageOf, PageQuery } from './paging';

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
  @IsOptional()
  @IsISO8601()
  receivedAt: string | null;

  /** The object the sender wrote to its blob store for this probe (sent probes only). */
  @IsOptional()
  @ValidateNested()
  @Type(() => BusProbeStorage)
  storage: BusProbeStorage | null;
}

export class ListBusProbesQuery extends PageQuery {}

export const BusProbeList = PageOf(BusProbe, 'BusProbeList');
export type BusProbeList = Page<BusProbe>;

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
}
