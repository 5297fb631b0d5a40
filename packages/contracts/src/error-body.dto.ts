import { IsIn, IsISO8601, IsOptional, IsString } from 'class-validator';
import { ERROR_CODES, type ErrorCode } from './errors';
import { NestedList } from './schema';

/** Schema class of one field problem (for the OpenAPI documents). */
export class FieldErrorDto {
  @IsString()
  field: string;

  @IsString()
  message: string;
}

/** Schema class of the error body (DECISIONS.md section 0). */
export class ErrorBodyDto {
  @IsString()
  detail: string;

  @IsIn(ERROR_CODES as unknown as string[])
  code: ErrorCode;

  @IsString()
  path: string;

  @IsISO8601()
  timestamp: string;

  @IsOptional()
  @NestedList(() => FieldErrorDto)
  errors?: FieldErrorDto[];
}
