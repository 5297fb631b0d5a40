import { IsIn, IsObject, IsString } from 'class-validator';

/** `GET /healthz`: the process is up. */
export class HealthResponse {
  @IsIn(['ok'])
  status: 'ok';

  @IsString()
  service: string;
}

/** `GET /readyz`: whether the service can do its work, and how well. */
export class ReadinessResponse {
  /**
   * `ready`: every check is `ok` (200). `degraded`: every dependency answers but something works
   * poorly, e.g. the `bus` check says events are late (200: the instance stays in rotation).
   * `unavailable`: a dependency (`database`, `broker`, `storage`) is unreachable (503).
   */
  @IsIn(['ready', 'degraded', 'unavailable'])
  status: 'ready' | 'degraded' | 'unavailable';

  /**
   * One entry per check, `ok` or what is wrong: `database`, `broker`, `storage` (the failure) and
   * `bus` (`degraded: <why>` when the oldest unpublished outbox event or a consumer's oldest message
   * is older than BUS_DEGRADED_AFTER_MS, or a consumer is not attached).
   */
  @IsObject()
  checks: Record<string, string>;
}
