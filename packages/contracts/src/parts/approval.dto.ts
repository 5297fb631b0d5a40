import { IsISO8601, IsString } from 'class-validator';
import { Nullable } from '../common/schema';

/** Who moved a part version or a BOM through the approval flow and when: usernames, `null` until it happens. */
export class ApprovalFields {
  @IsString()
  @Nullable()
  submittedBy: string | null;

  @IsISO8601()
  @Nullable()
  submittedAt: string | null;

  @IsString()
  @Nullable()
  approvedBy: string | null;

  @IsISO8601()
  @Nullable()
  approvedAt: string | null;

  @IsString()
  @Nullable()
  rejectedBy: string | null;

  @IsISO8601()
  @Nullable()
  rejectedAt: string | null;

  @IsString()
  @Nullable()
  rejectionReason: string | null;
}
