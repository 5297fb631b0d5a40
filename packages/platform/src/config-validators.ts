import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { makeValidator } from 'envalid';

/**
 * Validators of environment variables. Each refusal is a phrase that reads after the variable's
 * name (`PORT must be a port number from 1 to 65535 (got "x")`); values are quoted only where they
 * cannot hold a secret (numbers, flags, choices), never URLs, keys or secrets.
 */

interface VarSpec<T> {
  default?: T;
  desc?: string;
}

/** Longest delay Node's timers take: a larger one overflows and fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

function got(input: string): string {
  return `(got ${JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}...` : input)})`;
}

function rangeText(min: number, max?: number): string {
  if (max !== undefined) return `an integer from ${min} to ${max}`;
  return min === 1 ? 'a positive integer' : `an integer of at least ${min}`;
}

/** A whole number in [min, max]; decimals, exponents and trailing text are refused, not truncated. */
export function integer(range: { min: number; max?: number }, spec: VarSpec<number> = {}) {
  return makeValidator<number>((input) => {
    const value = Number(input);
    const ok =
      /^\s*[-+]?\d+\s*$/.test(input) &&
      Number.isSafeInteger(value) &&
      value >= range.min &&
      (range.max === undefined || value <= range.max);
    if (!ok) throw new Error(`must be ${rangeText(range.min, range.max)} ${got(input)}`);
    return value;
  })(spec);
}

/** A count or limit: 1 or more. */
export const positiveInt = (spec: VarSpec<number> = {}) => integer({ min: 1 }, spec);

/** A delay or interval handed to timers: 1 ms (or `min`) up to MAX_TIMER_MS. */
export const durationMs = (spec: VarSpec<number> = {}, min = 1) => integer({ min, max: MAX_TIMER_MS }, spec);

/** A TCP port to listen on. */
export function portNumber(spec: VarSpec<number> = {}) {
  return makeValidator<number>((input) => {
    const value = Number(input);
    if (!/^\s*\d+\s*$/.test(input) || value < 1 || value > 65_535) {
      throw new Error(`must be a port number from 1 to 65535 ${got(input)}`);
    }
    return value;
  })(spec);
}

/** One of a fixed list of words. */
export function oneOf<T extends string>(choices: readonly T[], spec: VarSpec<T> = {}) {
  return makeValidator<T>((input) => {
    if (!(choices as readonly string[]).includes(input)) {
      throw new Error(`must be one of ${choices.join(', ')} ${got(input)}`);
    }
    return input as T;
  })(spec);
}

const TRUE = ['true', 't', '1', 'yes', 'on'];
const FALSE = ['false', 'f', '0', 'no', 'off'];

/** true/false (also 1/0, yes/no, on/off). */
export function flag(spec: VarSpec<boolean> = {}) {
  return makeValidator<boolean>((input) => {
    const word = input.trim().toLowerCase();
    if (TRUE.includes(word)) return true;
    if (FALSE.includes(word)) return false;
    throw new Error(`must be true or false ${got(input)}`);
  })(spec);
}

/** An absolute URL with one of `protocols` (e.g. `['http:', 'https:']`); the value is not echoed. */
export function urlOf(protocols: readonly string[], spec: VarSpec<string> = {}) {
  const names = protocols.map((p) => p.replace(/:$/, '')).join(' or ');
  return makeValidator<string>((input) => {
    let parsed: URL;
    try {
      parsed = new URL(input);
    } catch {
      throw new Error(`must be a URL with scheme ${names}`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new Error(`must be a URL with scheme ${names} ${got(parsed.protocol.replace(/:$/, ''))}`);
    }
    return input;
  })(spec);
}

export const httpUrl = (spec: VarSpec<string> = {}) => urlOf(['http:', 'https:'], spec);

/**
 * The entries of a comma list of broker URLs, in their order, without blanks around them or empty
 * entries (a comma inside a password is written `%2C`).
 */
export function splitUrlList(list: string): string[] {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/**
 * One `amqp(s)://` URL, or the addresses of a cluster's nodes separated by commas; the value is the
 * list tidied (see splitUrlList), still one string. Refusals name the entry by its place, never its
 * text (it may hold a password).
 */
export function amqpUrlList(spec: VarSpec<string> = {}) {
  const protocols = ['amqp:', 'amqps:'];
  return makeValidator<string>((input) => {
    const entries = splitUrlList(input);
    if (entries.length === 0) throw new Error('must be one or more amqp or amqps URLs separated by commas');
    entries.forEach((entry, index) => {
      const what =
        entries.length > 1 ? `has an entry (${index + 1} of ${entries.length}) that is not` : 'must be';
      let parsed: URL;
      try {
        parsed = new URL(entry);
      } catch {
        throw new Error(`${what} a URL with scheme amqp or amqps`);
      }
      if (!protocols.includes(parsed.protocol))
        throw new Error(`${what} a URL with scheme amqp or amqps ${got(parsed.protocol.replace(/:$/, ''))}`);
      const first = entries.indexOf(entry);
      if (first !== index)
        throw new Error(`lists the same URL twice (entries ${first + 1} and ${index + 1})`);
    });
    return entries.join(',');
  })(spec);
}

/** PEM from an environment variable may carry literal `\n` (one-line .env files). */
export function normalisePem(pem: string): string {
  return pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem;
}

/** Refuses a key node:crypto reads but the service cannot use: a phrase, or undefined when fine. */
export type KeyCheck = (key: KeyObject) => string | undefined;

/** A PEM private key, parsed at start (node:crypto) so a bad one stops the process here. */
export function pemPrivateKey(spec: VarSpec<string> = {}, check?: KeyCheck) {
  return makeValidator<string>((input) => {
    let key: KeyObject;
    try {
      key = createPrivateKey(normalisePem(input));
    } catch {
      throw new Error('must be an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)');
    }
    const problem = check?.(key);
    if (problem) throw new Error(problem);
    return input;
  })(spec);
}

const PUBLIC_KEY_BLOCK = /-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g;

/** One or more PEM public keys (SPKI blocks), each parsed at start; nothing else in between. */
export function pemPublicKeys(spec: VarSpec<string> = {}, check?: KeyCheck) {
  return makeValidator<string>((input) => {
    const pem = normalisePem(input);
    const blocks = pem.match(PUBLIC_KEY_BLOCK) ?? [];
    if (blocks.length === 0 || pem.replace(PUBLIC_KEY_BLOCK, '').trim() !== '') {
      throw new Error('must be PEM public keys (-----BEGIN PUBLIC KEY-----), separated by blank lines');
    }
    blocks.forEach((block, index) => {
      let key: KeyObject;
      try {
        key = createPublicKey(block);
      } catch {
        throw new Error(`holds a PEM block (key ${index + 1}) that is not a public key`);
      }
      const problem = check?.(key);
      if (problem) throw new Error(`key ${index + 1}: ${problem}`);
    });
    return input;
  })(spec);
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyAddress(entry: string): boolean {
  if (PROXY_NAMES.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length > 0) return false;
  if (prefix === undefined) return true;
  // A prefix length, or (IPv4) a dotted netmask as express's proxy-addr takes it.
  if (/^\d+$/.test(prefix)) return Number(prefix) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(prefix) === 4;
}

/**
 * `TRUST_PROXY`: the proxies whose X-Forwarded-For is believed (express's `trust proxy`): a hop count
 * (`1` = one gateway in front) or addresses, subnets and express's names (`loopback`, `uniquelocal`)
 * separated by commas. Empty trusts nobody. `true` (trust everyone) is refused: any client could
 * then choose its own address and escape every per-IP limit.
 */
export const trustProxy = makeValidator<false | number | string[]>((input) => {
  const value = String(input).trim();
  if (value === '' || value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  if (value === 'true' || value === '*') {
    throw new Error('must name the trusted proxies (a hop count or addresses), not trust everyone');
  }
  const entries = value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const bad = entries.find((entry) => !isProxyAddress(entry));
  if (bad !== undefined) {
    throw new Error(
      `must be a hop count or addresses, subnets, loopback, linklocal or uniquelocal ${got(bad)}`,
    );
  }
  return entries;
});

/** A comma list of CIDR ranges (`10.1.2.0/24`, `fd00::/8`); empty = none. */
export const cidrList = makeValidator<string[]>((input) => {
  const entries = String(input)
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const bad = entries.find((entry) => {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const max = family === 4 ? 32 : 128;
    return !family || extra !== undefined || !/^\d{1,3}$/.test(bits ?? '') || Number(bits) > max;
  });
  if (bad !== undefined) throw new Error(`must be CIDR ranges like 10.1.2.0/24 ${got(bad)}`);
  return entries;
});
