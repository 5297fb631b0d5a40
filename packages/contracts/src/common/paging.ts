import { type ClassConstructor } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { NestedList } from './schema';

/** Default and maximum page sizes of every list (DECISIONS.md section 0). */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;
/**
 * The highest page number: past it a list's offset (page x pageSize rows) would be refused by the
 * database (or written in exponent form), so such a page is a 400 naming `page`, not a failed statement.
 */
export const MAX_PAGE = 10_000_000;

const PAGE_MESSAGE = `page must be a whole number from 1 to ${MAX_PAGE}`;
const PAGE_SIZE_MESSAGE = `pageSize must be a whole number from 1 to ${MAX_PAGE_SIZE}`;

/** `?page&pageSize` of every list route; `page` starts at 1. List queries extend it. */
export class PageQuery {
  @IsOptional()
  @IsInt({ message: PAGE_MESSAGE })
  @Min(1, { message: PAGE_MESSAGE })
  @Max(MAX_PAGE, { message: PAGE_MESSAGE })
  page?: number;

  @IsOptional()
  @IsInt({ message: PAGE_SIZE_MESSAGE })
  @Min(1, { message: PAGE_SIZE_MESSAGE })
  @Max(MAX_PAGE_SIZE, { message: PAGE_SIZE_MESSAGE })
  pageSize?: number;
}

/** Shape of every paged list answer: `{ items, total, page, pageSize }`. */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
}

/** Shape of an unpaged list answer: `{ items }`. */
export interface Items<T> {
  items: T[];
}

/** Gives a generated DTO class the name its OpenAPI schema is listed under. */
function named<C extends ClassConstructor<object>>(dto: C, name: string): C {
  Object.defineProperty(dto, 'name', { value: name });
  return dto;
}

/** The DTO of `{ items }` with items of `item` (one class per list, so the schema has its name). */
export function ItemsOf<T extends object>(
  item: ClassConstructor<T>,
  name: string,
): ClassConstructor<Items<T>> {
  class ItemsDto {
    @NestedList(() => item)
    items: T[];
  }
  return named(ItemsDto, name);
}

/** The DTO of `{ items, total, page, pageSize }` with items of `item`. */
export function PageOf<T extends object>(item: ClassConstructor<T>, name: string): ClassConstructor<Page<T>> {
  class PageDto {
    @NestedList(() => item)
    items: T[];

    @IsInt()
    total: number;

    @IsInt()
    page: number;

    @IsInt()
    pageSize: number;
  }
  return named(PageDto, name);
}
