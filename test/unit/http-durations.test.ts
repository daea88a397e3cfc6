import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HttpDurations } from '../../src/http-durations.js';

const NAME = 'kassa_http_request_duration_seconds';
const HELP = 'HTTP request duration by route and status';
const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Requests of three routes, several statuses and durations on, between and beyond the bounds. */
const OBSERVED: Array<[string, string, number, number]> = [
  ['GET', '/checkout-sessions/:id', 200, 0.0004],
  ['GET', '/checkout-sessions/:id', 200, 0.005],
  ['GET', '/checkout-sessions/:id', 200, 0.0050001],
  ['GET', '/checkout-sessions/:id', 404, 0.3],
  ['POST', '/checkout-sessions', 201, 0.012],
  ['POST', '/checkout-sessions', 201, 7.5],
  ['POST', '/graphql', 200, 1],
  ['GET', '/graphql', 200, 2.5],
  ['POST', '/checkout-sessions', 422, 0],
  ['GET', '/checkout-sessions/:id', 200, 0.07],
];

type ContentType = typeof Registry.PROMETHEUS_CONTENT_TYPE | typeof Registry.OPENMETRICS_CONTENT_TYPE;

/** A registry printing `type` (prom-client types a registry by the one it was made with). */
function registryOf(type: ContentType): Registry {
  const registry = new Registry();
  registry.setContentType(type as typeof Registry.PROMETHEUS_CONTENT_TYPE);
  return registry;
}

function withPromClient(type: ContentType = Registry.PROMETHEUS_CONTENT_TYPE, observed = OBSERVED): Registry {
  const registry = registryOf(type);
  const histogram = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route', 'status'] as const,
    buckets: BOUNDS,
    registers: [registry],
  });
  for (const [method, route, status, seconds] of observed)
    histogram.observe({ method, route, status: String(status) }, seconds);
  return registry;
}

function withHttpDurations(type: ContentType = Registry.PROMETHEUS_CONTENT_TYPE): Registry {
  const registry = registryOf(type);
  const durations = new HttpDurations(NAME, HELP, BOUNDS, registry);
  for (const [method, route, status, seconds] of OBSERVED) durations.observe(method, route, status, seconds);
  return registry;
}

describe('HttpDurations (kassa_http_request_duration_seconds)', () => {
  it('exports exactly what prom-client’s Histogram exports for the same requests, as text and as JSON', async () => {
    const expected = withPromClient();
    const registry = withHttpDurations();
    const text = await registry.metrics();
    expect(text).toBe(await expected.metrics());
    expect(text).toContain(`${NAME}_bucket{le="0.005",method="GET",route="/checkout-sessions/:id",status="200"} 2\n`);
    expect(await registry.getMetricsAsJSON()).toEqual(await expected.getMetricsAsJSON());
  });

  it('is exported in OpenMetrics too, the same as prom-client’s', async () => {
    const expected = withPromClient(Registry.OPENMETRICS_CONTENT_TYPE);
    const registry = withHttpDurations(Registry.OPENMETRICS_CONTENT_TYPE);
    expect(await registry.metrics()).toBe(await expected.metrics());
  });

  it('starts again from nothing when the registry resets its metrics', async () => {
    const registry = withHttpDurations();
    registry.resetMetrics();
    expect(await registry.metrics()).toBe(await withPromClient(Registry.PROMETHEUS_CONTENT_TYPE, []).metrics());
  });
});
