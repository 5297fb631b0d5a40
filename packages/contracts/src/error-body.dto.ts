import { Type } from 'class-transformer';
import { IsArray, IsIn, IsISO8601, IsOptional, IsString, ValidateNested } from 'class-validator';
import { ERROR_CODES, type ErrorCode } from './errors';

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
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => FieldErrorDto)
  errors?: FieldErrorDto[];
}
