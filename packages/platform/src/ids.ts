import { v7 } from 'uuid';

/** A new UUIDv7 (time ordered), the id of every row and envelope. */
export function newId(): string {
  return v7();
}
