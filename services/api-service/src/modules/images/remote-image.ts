import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { ValidationError } from '@hwp/platform';
import ipaddr from 'ipaddr.js';

export interface RemoteFetchOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Redirects followed (each target checked like the first). */
  maxRedirects?: number;
  /** Ranges allowed although not public (an operator's internal image hosts), e.g. `10.1.2.0/24`. */
  allowedCidrs?: string[];
}

const refuse = (detail: string) =>
  new ValidationError(detail, [{ field: 'reference_image', message: detail }]);

/** Whether an address may be fetched: public unicast, or inside an allowed range. */
function permitted(address: string, allowed: [ipaddr.IPv4 | ipaddr.IPv6, number][]): boolean {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (allowed.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits)))
    return true;
  return parsed.range() === 'unicast';
}

/**
 * Fetches a remote image for a tool with the SSRF rules of DECISIONS.md section 3: http(s) only, no
 * credentials in the URL, every address the name resolves to must be public (checked at connect
 * time, so a DNS answer cannot change between check and use), redirects checked the same way, a
 * time limit for the whole fetch and a size limit counted as the bytes arrive. Refusals are 400.
 */
export async function fetchRemoteImage(raw: string, options: RemoteFetchOptions): Promise<Buffer> {
  const allowed = (options.allowedCidrs ?? []).map((cidr) => ipaddr.parseCIDR(cidr));
  const deadline = AbortSignal.timeout(options.timeoutMs);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('reference_image must be an http(s) URL or a file URL of this host');
  }
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw refuse('Only http and https URLs are fetched');
    if (url.username || url.password) throw refuse('URLs with credentials are not fetched');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (ipaddr.isValid(host) && !permitted(host, allowed))
      throw refuse('reference_image points at a private, loopback or link-local address');
    const res = await get(url, allowed, deadline);
    const location = res.headers.location;
    if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location) {
      res.resume();
      if (hop >= (options.maxRedirects ?? 3)) throw refuse('reference_image redirects too often');
      url = new URL(location, url);
      continue;
    }
    if (res.statusCode !== 200) {
      res.resume();
      throw refuse(`reference_image answered HTTP ${res.statusCode}`);
    }
    const declared = Number(res.headers['content-length']);
    if (declared > options.maxBytes) {
      res.destroy();
      throw refuse(`reference_image is larger than ${options.maxBytes} bytes`);
    }
    return read(res, options.maxBytes, deadline);
  }
}

function get(
  url: URL,
  allowed: [ipaddr.IPv4 | ipaddr.IPv6, number][],
  signal: AbortSignal,
): Promise<IncomingMessage> {
  // Resolution and the check happen at connect time, on the addresses actually used.
  const lookup: LookupFunction = (hostname, opts, callback) => {
    dnsLookup(hostname, { ...opts, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => !permitted(a.address, allowed));
      if (bad || list.length === 0)
        return callback(Object.assign(new Error('private address'), { code: 'EPRIVATE' }), '', 0);
      if ((opts as { all?: boolean }).all)
        return (callback as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(url, { method: 'GET', lookup, signal, headers: { accept: 'image/*' } }, resolve);
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPRIVATE')
        reject(refuse('reference_image resolves to a private, loopback or link-local address'));
      else if (signal.aborted) reject(refuse('reference_image took too long to fetch'));
      else reject(refuse(`reference_image could not be fetched (${error.code ?? error.message})`));
    });
    req.end();
  });
}

function read(res: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: Error) => {
      res.destroy();
      reject(error);
    };
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) fail(refuse(`reference_image is larger than ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', () =>
      fail(refuse(signal.aborted ? 'reference_image took too long to fetch' : 'reference_image broke off')),
    );
  });
}
