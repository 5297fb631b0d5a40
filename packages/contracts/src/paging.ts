import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** Default and maximum page sizes of every list (DECISIONS.md section 0). */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/** `?page&pageSize` of every list route; `page` starts at 1. */
export class PageQuery {
  @IsOptional()
  @IsInt()
  @Min(1)
  page?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  pageSize?: number;
}

/** Shape of every list answer: `{ items, total, page, pageSize }`. */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
}
