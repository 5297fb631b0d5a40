/** The clock APIs jest can fake (the test kit is built without jest's types, so they are named here). */
export type FakeableAPI =
  | 'Date'
  | 'hrtime'
  | 'nextTick'
  | 'performance'
  | 'queueMicrotask'
  | 'requestAnimationFrame'
  | 'cancelAnimationFrame'
  | 'requestIdleCallback'
  | 'cancelIdleCallback'
  | 'setImmediate'
  | 'clearImmediate'
  | 'setInterval'
  | 'clearInterval'
  | 'setTimeout'
  | 'clearTimeout';

/** The jest global of the test file that calls in (present whenever a test runs). */
declare const jest: { useFakeTimers(config: { advanceTimers?: boolean; doNotFake: FakeableAPI[] }): void };

const ALL: FakeableAPI[] = [
  'Date',
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
];

/**
 * jest.useFakeTimers faking only `apis` (e.g. `Date` to move the clock, or `setTimeout` and
 * `clearTimeout` to fire a time limit at once), so the rest of the process (sockets, the database
 * driver, other timers) runs for real. `advanceTimers` lets the faked clock keep moving too.
 */
export function fakeOnly(apis: FakeableAPI[], options: { advanceTimers?: boolean } = {}): void {
  jest.useFakeTimers({ ...options, doNotFake: ALL.filter((api) => !apis.includes(api)) });
}
