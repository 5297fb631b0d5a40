import cors from 'cors';
import type { RequestHandler } from 'express';

/** Where browser apps are served from during development (Vite, its preview, Angular, webpack). */
export const DEV_ORIGINS = [
  'http://localhost:5173',
  'http://127.0.0.1:5173',
  'http://localhost:4173',
  'http://localhost:4200',
  'http://localhost:8080',
];

/**
 * The origins whose pages may call this host from a browser: `CORS_ORIGINS` (comma list; `*` for
 * any, without credentials), else none in production and the common dev servers' elsewhere.
 */
export function corsOrigins(config: { CORS_ORIGINS?: string; NODE_ENV: string }): string[] {
  if (config.CORS_ORIGINS !== undefined) {
    return config.CORS_ORIGINS.split(',')
      .map((o) => o.trim().replace(/\/+$/, ''))
      .filter(Boolean);
  }
  return config.NODE_ENV === 'production' ? [] : DEV_ORIGINS;
}

/** Headers a browser page may read besides the CORS-safelisted ones. */
const EXPOSED = [
  'ETag',
  'Last-Modified',
  'Content-Range',
  'Accept-Ranges',
  'Content-Length',
  'Content-Disposition',
  'Location',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'X-Request-Id',
  'X-Tenant-ID',
  'X-Supabase-Api-Version',
  'WWW-Authenticate',
];

/**
 * The CORS middleware of every route of a host (a route may declare its own instead): listed origins
 * get their origin echoed with credentials (cookies, the CSRF header); `*` lets any page call without
 * credentials. A preflight reflects the headers the page asks for (supabase-js sends `apikey`,
 * `x-client-info`, `x-supabase-api-version`) and is cached 10 minutes. None listed: no CORS at all.
 */
export function apiCors(origins: string[]): RequestHandler | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  return cors({
    origin: any ? '*' : origins,
    credentials: !any,
    exposedHeaders: EXPOSED,
    maxAge: 600,
  });
}
