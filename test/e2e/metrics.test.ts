import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKassa, type TestKassa } from '../support/kassa.js';

let kassa: TestKassa;
beforeAll(async () => {
  kassa = await startTestKassa();
});
afterAll(() => kassa?.close());

describe('GET /metrics', () => {
  it('serves Prometheus text with request durations labelled by route pattern, not by raw path', async () => {
    await kassa.http.get('/checkout-sessions/00000000-0000-4000-8000-000000000001').expect(404);
    await kassa.http.get('/checkout-sessions/00000000-0000-4000-8000-000000000002').expect(404);
    const response = await kassa.http.get('/metrics').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.text).toContain('kassa_process_cpu_user_seconds_total');
    expect(response.text).toMatch(
      /kassa_http_request_duration_seconds_count\{method="GET",route="\/checkout-sessions\/:id",status="404"\} 2/,
    );
    expect(response.text).not.toContain('00000000-0000-4000-8000-000000000001');
  });
});
