import { IsIn, IsObject, IsString } from 'class-validator';

/** `GET /healthz`: the process is up. */
export class HealthResponse {
  @IsIn(['ok'])
  status: 'ok';

  @IsString()
  service: string;
}

/** `GET /readyz`: every dependency the service needs answered. */
export class ReadinessResponse {
  @IsIn(['ready', 'unavailable'])
  status: 'ready' | 'unavailable';

  /** One entry per dependency (`database`, `broker`), `ok` or the failure. */
  @IsObject()
  checks: Record<string, string>;
}
