import { Counter, type Registry } from 'prom-client';
import type { Throttle } from './domain/organisations/throttle.js';

/** `kassa_rate_limit_refusals_total{limit}`: requests answered 429 (or refused at a WebSocket upgrade), by limit. */
export function countRateLimitRefusals(registry: Registry, throttle: Throttle): void {
  const refusals = new Counter({
    name: 'kassa_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit, by limit (docs/api/rest.md#rate-limits)',
    labelNames: ['limit'] as const,
    registers: [registry],
  });
  throttle.onRefusal((limit) => refusals.inc({ limit }));
}
