import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/logging.js';
import { openApiPath, ROUTES } from '../../src/rest/openapi.js';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createMerchant, signed, type TestMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';
import { signedRequest } from '../support/webhooks.js';

/** /openapi.json documents every route Express serves, with every status the probes below get back. */

let kassa: TestKassa;
let merchant: TestMerchant;
let document: { openapi: string; info: { version: string }; paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

beforeAll(async () => {
  kassa = await startTestKassa();
  merchant = await createMerchant(kassa.ctx);
  document = (await kassa.http.get('/openapi.json').expect(200)).body;
});

afterAll(async () => {
  await kassa?.close();
});

/** (method, path) of every route registered on the app, `all` (405) handlers left out. */
function expressRoutes(app: Express): string[] {
  const found: string[] = [];
  const walk = (stack: any[]) => {
    for (const layer of stack) {
      if (layer.route) {
        // Handlers of `router.all` (the 405 answers) carry no method of their own.
        // (app.all registers every method on one route: that is a 405 answer too.)
        let methods = [...new Set<string>(layer.route.stack.map((handler: { method?: string }) => handler.method).filter(Boolean))];
        if (methods.length > 10) methods = [];
        const paths: string[] = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const method of methods) for (const path of paths) found.push(`${method.toUpperCase()} ${path}`);
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: any[] } }).router.stack);
  return found.sort();
}

describe('/openapi.json', () => {
  it('is OpenAPI 3.1 with version 1.0.0 (spec §9), and /docs renders it', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.0.0');
    const page = await kassa.http.get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('POST /webhook-endpoints');
    expect(page.text).not.toMatch(/<script/);
  });

  it('documents exactly the routes Express serves', () => {
    const app = createApp({ ctx: kassa.ctx, logger: createLogger('silent'), readiness: { checkDatabase: async () => {} } });
    // The hosted checkout page (/pay/…) is HTML for the payer's browser, not the REST API; its
    // routes are covered by test/e2e/checkout-page.test.ts. Everything else must be documented.
    const all = expressRoutes(app);
    const served = all.filter((route) => !/^\w+ \/pay(\/|$)/.test(route));
    expect(all.length - served.length).toBeGreaterThan(0);
    expect(served.length).toBeGreaterThan(10);
    const documented = Object.entries(document.paths)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(served.map((route) => route.replace(/:(\w+)/g, '{$1}')).sort());
    expect(ROUTES.map((route) => `${route.method.toUpperCase()} ${openApiPath(route.path)}`).sort()).toEqual(documented);
  });

  it('the create body schema is generated from the zod schema the route validates with', () => {
    const body = (document.paths['/checkout-sessions']!.post as any).requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['user', 'items', 'currency']);
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.items.maxItems).toBe(100);
    expect(body.properties.items.items.properties.unit_price.type).toBe('number');
    const hook = (document.paths['/webhook-endpoints']!.post as any).requestBody.content['application/json'].schema;
    expect(hook.properties.events.items.enum).toContain('checkout_session.paid');
  });

  it('every status a route answers is documented for it', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const id = session.session_id as string;
    const endpoint = (await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', { url: 'http://127.0.0.1:9/x' })).body.id as string;
    const missing = '00000000-0000-4000-8000-000000000000';
    const big = JSON.stringify({ pad: 'x'.repeat(110 * 1024) });
    const probes: Array<[string, string, () => Promise<{ status: number }>]> = [
      ['post', '/checkout-sessions', () => signedRequest(kassa, merchant, 'post', '/checkout-sessions', checkoutRequest())],
      ['post', '/checkout-sessions', () => signedRequest(kassa, merchant, 'post', '/checkout-sessions', {})],
      ['post', '/checkout-sessions', () => kassa.http.post('/checkout-sessions').send({})],
      ['post', '/checkout-sessions', () => signed(kassa.http.post('/checkout-sessions'), merchant, 'x', { contentType: 'text/plain' })],
      ['post', '/checkout-sessions', () => signed(kassa.http.post('/checkout-sessions'), merchant, big)],
      ['get', '/checkout-sessions/{id}', () => kassa.http.get(`/checkout-sessions/${id}`)],
      ['get', '/checkout-sessions/{id}', () => kassa.http.get('/checkout-sessions/nope')],
      ['get', '/checkout-sessions/{id}', () => kassa.http.get(`/checkout-sessions/${missing}`)],
      ['post', '/checkout-sessions/{id}/bind-tx', () => kassa.http.post(`/checkout-sessions/${id}/bind-tx`).send({ tx_hash: txHash(0xa91), chain_id: '31337', crypto_currency: 'ETH' })],
      ['post', '/checkout-sessions/{id}/bind-tx', () => kassa.http.post(`/checkout-sessions/${id}/bind-tx`).send({ tx_hash: txHash(0xa92), chain_id: '31337', crypto_currency: 'ETH' })],
      ['post', '/checkout-sessions/{id}/bind-tx', () => kassa.http.post(`/checkout-sessions/${missing}/bind-tx`).send({ tx_hash: txHash(0xa93), chain_id: '31337' })],
      ['post', '/checkout-sessions/{id}/bind-tx', () => kassa.http.post(`/checkout-sessions/${id}/bind-tx`).send({})],
      ['post', '/checkout-sessions/{id}/bind-tx', () => kassa.http.post(`/checkout-sessions/${id}/bind-tx`).set('Content-Type', 'text/plain').send('x')],
      ['post', '/webhook-endpoints', () => signedRequest(kassa, merchant, 'post', '/webhook-endpoints', { url: 'ftp://x' })],
      ['post', '/webhook-endpoints', () => kassa.http.post('/webhook-endpoints').send({})],
      ['post', '/webhook-endpoints', () => signed(kassa.http.post('/webhook-endpoints'), merchant, 'x', { contentType: 'text/plain' })],
      ['post', '/webhook-endpoints', () => signed(kassa.http.post('/webhook-endpoints'), merchant, big)],
      ['get', '/webhook-endpoints', () => signedRequest(kassa, merchant, 'get', '/webhook-endpoints')],
      ['get', '/webhook-endpoints', () => kassa.http.get('/webhook-endpoints')],
      ['get', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'get', `/webhook-endpoints/${endpoint}`)],
      ['get', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'get', `/webhook-endpoints/${missing}`)],
      ['get', '/webhook-endpoints/{id}', () => kassa.http.get(`/webhook-endpoints/${endpoint}`)],
      ['patch', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'patch', `/webhook-endpoints/${endpoint}`, { enabled: false })],
      ['patch', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'patch', `/webhook-endpoints/${endpoint}`, { enabled: 'no' })],
      ['patch', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'patch', `/webhook-endpoints/${missing}`, {})],
      ['patch', '/webhook-endpoints/{id}', () => kassa.http.patch(`/webhook-endpoints/${endpoint}`).send({})],
      ['patch', '/webhook-endpoints/{id}', () => signed(kassa.http.patch(`/webhook-endpoints/${endpoint}`), merchant, 'x', { contentType: 'text/plain' })],
      ['post', '/webhook-endpoints/{id}/rotate-secret', () => signedRequest(kassa, merchant, 'post', `/webhook-endpoints/${endpoint}/rotate-secret`, {})],
      ['post', '/webhook-endpoints/{id}/rotate-secret', () => signedRequest(kassa, merchant, 'post', `/webhook-endpoints/${missing}/rotate-secret`, {})],
      ['post', '/webhook-endpoints/{id}/rotate-secret', () => kassa.http.post(`/webhook-endpoints/${endpoint}/rotate-secret`)],
      ['delete', '/webhook-endpoints/{id}', () => kassa.http.delete(`/webhook-endpoints/${endpoint}`)],
      ['delete', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'delete', '/webhook-endpoints/nope')],
      ['get', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'get', '/webhook-endpoints/nope')],
      ['post', '/webhook-endpoints/{id}/rotate-secret', () => signedRequest(kassa, merchant, 'post', '/webhook-endpoints/nope/rotate-secret', {})],
      ['delete', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'delete', `/webhook-endpoints/${endpoint}`)],
      ['delete', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'delete', `/webhook-endpoints/${endpoint}`)],
      ['get', '/events', () => signedRequest(kassa, merchant, 'get', '/events?limit=2')],
      ['get', '/events', () => signedRequest(kassa, merchant, 'get', '/events?limit=0')],
      ['get', '/events', () => kassa.http.get('/events')],
      ['get', '/health', () => kassa.http.get('/health')],
      ['get', '/ready', () => kassa.http.get('/ready')],
      ['get', '/metrics', () => kassa.http.get('/metrics')],
      ['get', '/openapi.json', () => kassa.http.get('/openapi.json')],
      ['get', '/docs', () => kassa.http.get('/docs')],
    ];
    const seen = new Map<string, Set<number>>();
    for (const [method, path, probe] of probes) {
      const { status } = await probe();
      const documented = Object.keys(document.paths[path]?.[method]?.responses ?? {});
      expect(documented, `${method.toUpperCase()} ${path} answered ${status}`).toContain(String(status));
      seen.set(`${method} ${path}`, (seen.get(`${method} ${path}`) ?? new Set()).add(status));
    }
    // Every documented operation was probed, and the probes reached more than the happy path.
    expect(seen.size).toBe(ROUTES.length);
    expect([...seen.get('post /checkout-sessions')!].sort()).toEqual([201, 400, 401, 413, 415]);
    expect([...seen.get('delete /webhook-endpoints/{id}')!].sort()).toEqual([204, 400, 401, 404]);
  });
});
