import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/logging.js';
import { openApiPath, ROUTES } from '../../src/rest/openapi.js';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createMerchant, signed, type TestMerchant } from '../factories/merchant.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession, postCreate } from '../support/rest-kassa.js';
import { PUBLIC_FIELDS, MERCHANT_ONLY_FIELDS } from '../support/spec-fields.js';
import { signedRequest } from '../support/webhooks.js';
import { paymentLinkRequest } from '../factories/payment-link.js';
import { setBranding } from '../../src/domain/organisations/branding.js';

/** /openapi.json documents every route Express serves, with every status the probes below get back. */

let kassa: TestKassa;
let merchant: TestMerchant;
let document: {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};

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
        let methods = [
          ...new Set<string>(layer.route.stack.map((handler: { method?: string }) => handler.method).filter(Boolean)),
        ];
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
  it('is OpenAPI 3.1 with version 1.0.0, and /docs renders it', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.0.0');
    const page = await kassa.http.get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('POST /webhook-endpoints');
    expect(page.text).not.toMatch(/<script/);
  });

  it('documents exactly the routes Express serves', () => {
    const app = createApp({
      ctx: kassa.ctx,
      logger: createLogger('silent'),
      readiness: { checkDatabase: async () => {} },
    });
    // The hosted pages (/pay/…, /l/…) are HTML for the payer's browser, not the REST API; their
    // routes are covered by test/e2e/checkout-page.test.ts and payment-links.test.ts. The dashboard (/dashboard/…) is
    // the merchant staff's, behind its own sign-in (docs/dashboard.md#routes, test/e2e/dashboard-*.test.ts).
    // Everything else must be documented.
    const all = expressRoutes(app);
    const served = all.filter((route) => !/^\w+ \/(pay|l|dashboard)(\/|$)/.test(route));
    expect(all.length - served.length).toBeGreaterThan(0);
    expect(served.length).toBeGreaterThan(10);
    const documented = Object.entries(document.paths)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(served.map((route) => route.replace(/:(\w+)/g, '{$1}')).sort());
    expect(ROUTES.map((route) => `${route.method.toUpperCase()} ${openApiPath(route.path)}`).sort()).toEqual(
      documented,
    );
  });

  // The bounds are those of docs/api/rest.md#create-rules-and-limits.
  it('the create body schema is generated from the zod schema the route validates with, with its bounds', () => {
    const body = (document.paths['/checkout-sessions']!.post as any).requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['user', 'items', 'currency']);
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.items.maxItems).toBe(100);
    expect(body.properties.metadata).toMatchObject({ type: 'object', maxProperties: 50 });
    expect(body.properties.items.items.properties.unit_price).toMatchObject({ type: 'number', minimum: 0 });
    expect(body.properties.items.items.properties.quantity).toMatchObject({ type: 'integer', minimum: 1 });
    expect(body.properties.expires_in_minutes).toMatchObject({
      type: 'integer',
      minimum: 5,
      maximum: 10080,
      default: 60,
    });
    const bind = (document.paths['/checkout-sessions/{id}/bind-tx']!.post as any).requestBody.content[
      'application/json'
    ].schema;
    expect([...bind.properties.crypto_currency.enum].sort()).toEqual(['BNB', 'BTC', 'ETH', 'SOL', 'USDC', 'USDT']);
    const hook = (document.paths['/webhook-endpoints']!.post as any).requestBody.content['application/json'].schema;
    expect(hook.properties.events.items.enum).toContain('checkout_session.paid');
  });

  it('describes both signing schemes and the replay refusal, and names on each signed operation the string it signs', () => {
    const full = document as unknown as {
      components: { securitySchemes: Record<string, { description: string }> };
      info: { description: string };
    };
    const scheme = full.components.securitySchemes.ServiceSignature!.description;
    expect(scheme).toContain('`{timestamp}.{rawBody}`');
    expect(scheme).toContain('`{timestamp}.{METHOD}.{path?query}.{rawBody}`');
    expect(scheme).toMatch(/not decoded/);
    expect(scheme).toMatch(/accepted once/);
    const operation = (path: string, method: string) =>
      (document.paths[path]![method] as unknown as { description?: string }).description ?? '';
    expect(operation('/checkout-sessions', 'post')).toContain('`{timestamp}.{rawBody}`');
    expect(operation('/events', 'get')).toContain('`{timestamp}.GET./events?…{query as sent}.`');
    expect(operation('/webhook-endpoints/{id}', 'delete')).toContain('`{timestamp}.DELETE./webhook-endpoints/{id}.`');
    expect(operation('/webhook-endpoints/{id}/rotate-secret', 'post')).toContain(
      '`{timestamp}.POST./webhook-endpoints/{id}/rotate-secret.{rawBody}`',
    );
    expect(operation('/checkout-sessions/{id}', 'get')).toBe('');
  });

  it('documents 429 with Retry-After on every rate-limited operation, and only there', () => {
    const limited = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => '429' in operation.responses)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(limited.sort()).toEqual(
      [
        'POST /checkout-sessions',
        'GET /checkout-sessions/{id}',
        'POST /checkout-sessions/{id}/bind-tx',
        'POST /webhook-endpoints',
        'GET /webhook-endpoints',
        'GET /webhook-endpoints/{id}',
        'PATCH /webhook-endpoints/{id}',
        'DELETE /webhook-endpoints/{id}',
        'POST /webhook-endpoints/{id}/rotate-secret',
        'GET /events',
        'POST /payment-links',
        'GET /payment-links',
        'GET /payment-links/{id}',
        'PATCH /payment-links/{id}',
        'POST /payment-links/{id}/sessions',
        'POST /checkout-sessions/{id}/refunds',
        'GET /checkout-sessions/{id}/refunds',
        'GET /refunds/{id}',
        'POST /refunds/{id}/cancel',
      ].sort(),
    );
    const tooMany = document.paths['/checkout-sessions']!.post!.responses['429'] as {
      headers: Record<string, { schema: { type: string } }>;
      content: unknown;
    };
    expect(tooMany.headers['Retry-After']!.schema.type).toBe('integer');
    expect(tooMany.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
  });

  it('every status a route answers is documented for it', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const id = session.session_id as string;
    const endpoint = (
      await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', { url: 'http://127.0.0.1:9/x' })
    ).body.id as string;
    const missing = '00000000-0000-4000-8000-000000000000';
    const big = JSON.stringify({ pad: 'x'.repeat(110 * 1024) });
    const link = (await signedRequest(kassa, merchant, 'post', '/payment-links', paymentLinkRequest())).body
      .payment_link_id as string;
    const usedUp = (await signedRequest(kassa, merchant, 'post', '/payment-links', paymentLinkRequest({ max_uses: 1 })))
      .body.payment_link_id as string;
    await kassa.http.post(`/payment-links/${usedUp}/sessions`).send({ email: 'payer@example.com' });
    const inactive = (
      await signedRequest(kassa, merchant, 'post', '/payment-links', paymentLinkRequest({ active: false }))
    ).body.payment_link_id as string;
    const logo = (
      await setBranding(kassa.ctx, merchant.organisationId, {
        logo: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(8)]),
      })
    ).logoSha256!;
    const probes: Array<[string, string, () => Promise<{ status: number }>]> = [
      [
        'post',
        '/checkout-sessions',
        () => signedRequest(kassa, merchant, 'post', '/checkout-sessions', checkoutRequest()),
      ],
      ['post', '/checkout-sessions', () => signedRequest(kassa, merchant, 'post', '/checkout-sessions', {})],
      ['post', '/checkout-sessions', () => kassa.http.post('/checkout-sessions').send({})],
      [
        'post',
        '/checkout-sessions',
        () => signed(kassa.http.post('/checkout-sessions'), merchant, 'x', { contentType: 'text/plain' }),
      ],
      ['post', '/checkout-sessions', () => signed(kassa.http.post('/checkout-sessions'), merchant, big)],
      ['get', '/checkout-sessions/{id}', () => kassa.http.get(`/checkout-sessions/${id}`)],
      ['get', '/checkout-sessions/{id}', () => kassa.http.get('/checkout-sessions/nope')],
      ['get', '/checkout-sessions/{id}', () => kassa.http.get(`/checkout-sessions/${missing}`)],
      [
        'post',
        '/checkout-sessions/{id}/bind-tx',
        () =>
          kassa.http
            .post(`/checkout-sessions/${id}/bind-tx`)
            .send({ tx_hash: txHash(0xa91), chain_id: '31337', crypto_currency: 'ETH' }),
      ],
      [
        'post',
        '/checkout-sessions/{id}/bind-tx',
        () =>
          kassa.http
            .post(`/checkout-sessions/${id}/bind-tx`)
            .send({ tx_hash: txHash(0xa92), chain_id: '31337', crypto_currency: 'ETH' }),
      ],
      [
        'post',
        '/checkout-sessions/{id}/bind-tx',
        () =>
          kassa.http.post(`/checkout-sessions/${missing}/bind-tx`).send({ tx_hash: txHash(0xa93), chain_id: '31337' }),
      ],
      ['post', '/checkout-sessions/{id}/bind-tx', () => kassa.http.post(`/checkout-sessions/${id}/bind-tx`).send({})],
      [
        'post',
        '/checkout-sessions/{id}/bind-tx',
        () => kassa.http.post(`/checkout-sessions/${id}/bind-tx`).set('Content-Type', 'text/plain').send('x'),
      ],
      [
        'post',
        '/webhook-endpoints',
        () => signedRequest(kassa, merchant, 'post', '/webhook-endpoints', { url: 'ftp://x' }),
      ],
      ['post', '/webhook-endpoints', () => kassa.http.post('/webhook-endpoints').send({})],
      [
        'post',
        '/webhook-endpoints',
        () => signed(kassa.http.post('/webhook-endpoints'), merchant, 'x', { contentType: 'text/plain' }),
      ],
      ['post', '/webhook-endpoints', () => signed(kassa.http.post('/webhook-endpoints'), merchant, big)],
      ['get', '/webhook-endpoints', () => signedRequest(kassa, merchant, 'get', '/webhook-endpoints')],
      ['get', '/webhook-endpoints', () => kassa.http.get('/webhook-endpoints')],
      ['get', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'get', `/webhook-endpoints/${endpoint}`)],
      ['get', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'get', `/webhook-endpoints/${missing}`)],
      ['get', '/webhook-endpoints/{id}', () => kassa.http.get(`/webhook-endpoints/${endpoint}`)],
      [
        'patch',
        '/webhook-endpoints/{id}',
        () => signedRequest(kassa, merchant, 'patch', `/webhook-endpoints/${endpoint}`, { enabled: false }),
      ],
      [
        'patch',
        '/webhook-endpoints/{id}',
        () => signedRequest(kassa, merchant, 'patch', `/webhook-endpoints/${endpoint}`, { enabled: 'no' }),
      ],
      [
        'patch',
        '/webhook-endpoints/{id}',
        () => signedRequest(kassa, merchant, 'patch', `/webhook-endpoints/${missing}`, {}),
      ],
      ['patch', '/webhook-endpoints/{id}', () => kassa.http.patch(`/webhook-endpoints/${endpoint}`).send({})],
      [
        'patch',
        '/webhook-endpoints/{id}',
        () => signed(kassa.http.patch(`/webhook-endpoints/${endpoint}`), merchant, 'x', { contentType: 'text/plain' }),
      ],
      [
        'post',
        '/webhook-endpoints/{id}/rotate-secret',
        () => signedRequest(kassa, merchant, 'post', `/webhook-endpoints/${endpoint}/rotate-secret`, {}),
      ],
      [
        'post',
        '/webhook-endpoints/{id}/rotate-secret',
        () => signedRequest(kassa, merchant, 'post', `/webhook-endpoints/${missing}/rotate-secret`, {}),
      ],
      [
        'post',
        '/webhook-endpoints/{id}/rotate-secret',
        () => kassa.http.post(`/webhook-endpoints/${endpoint}/rotate-secret`),
      ],
      ['delete', '/webhook-endpoints/{id}', () => kassa.http.delete(`/webhook-endpoints/${endpoint}`)],
      ['delete', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'delete', '/webhook-endpoints/nope')],
      ['get', '/webhook-endpoints/{id}', () => signedRequest(kassa, merchant, 'get', '/webhook-endpoints/nope')],
      [
        'post',
        '/webhook-endpoints/{id}/rotate-secret',
        () => signedRequest(kassa, merchant, 'post', '/webhook-endpoints/nope/rotate-secret', {}),
      ],
      [
        'delete',
        '/webhook-endpoints/{id}',
        () => signedRequest(kassa, merchant, 'delete', `/webhook-endpoints/${endpoint}`),
      ],
      [
        'delete',
        '/webhook-endpoints/{id}',
        () => signedRequest(kassa, merchant, 'delete', `/webhook-endpoints/${endpoint}`),
      ],
      ['get', '/events', () => signedRequest(kassa, merchant, 'get', '/events?limit=2')],
      ['get', '/events', () => signedRequest(kassa, merchant, 'get', '/events?limit=0')],
      ['get', '/events', () => kassa.http.get('/events')],
      ['post', '/payment-links', () => signedRequest(kassa, merchant, 'post', '/payment-links', paymentLinkRequest())],
      ['post', '/payment-links', () => signedRequest(kassa, merchant, 'post', '/payment-links', {})],
      ['post', '/payment-links', () => kassa.http.post('/payment-links').send({})],
      [
        'post',
        '/payment-links',
        () => signed(kassa.http.post('/payment-links'), merchant, 'x', { contentType: 'text/plain' }),
      ],
      ['post', '/payment-links', () => signed(kassa.http.post('/payment-links'), merchant, big)],
      ['get', '/payment-links', () => signedRequest(kassa, merchant, 'get', '/payment-links')],
      ['get', '/payment-links', () => kassa.http.get('/payment-links')],
      ['get', '/payment-links/{id}', () => signedRequest(kassa, merchant, 'get', `/payment-links/${link}`)],
      ['get', '/payment-links/{id}', () => signedRequest(kassa, merchant, 'get', `/payment-links/${missing}`)],
      ['get', '/payment-links/{id}', () => signedRequest(kassa, merchant, 'get', '/payment-links/nope')],
      ['get', '/payment-links/{id}', () => kassa.http.get(`/payment-links/${link}`)],
      [
        'patch',
        '/payment-links/{id}',
        () => signedRequest(kassa, merchant, 'patch', `/payment-links/${link}`, { name: 'Renamed' }),
      ],
      [
        'patch',
        '/payment-links/{id}',
        () => signedRequest(kassa, merchant, 'patch', `/payment-links/${link}`, { active: 'no' }),
      ],
      ['patch', '/payment-links/{id}', () => signedRequest(kassa, merchant, 'patch', `/payment-links/${missing}`, {})],
      ['patch', '/payment-links/{id}', () => kassa.http.patch(`/payment-links/${link}`).send({})],
      [
        'patch',
        '/payment-links/{id}',
        () => signed(kassa.http.patch(`/payment-links/${link}`), merchant, 'x', { contentType: 'text/plain' }),
      ],
      [
        'post',
        '/payment-links/{id}/sessions',
        () => kassa.http.post(`/payment-links/${link}/sessions`).send({ email: 'payer@example.com' }),
      ],
      ['post', '/payment-links/{id}/sessions', () => kassa.http.post(`/payment-links/${link}/sessions`).send({})],
      ['post', '/payment-links/{id}/sessions', () => kassa.http.post(`/payment-links/${missing}/sessions`).send({})],
      [
        'post',
        '/payment-links/{id}/sessions',
        () => kassa.http.post(`/payment-links/${link}/sessions`).set('Content-Type', 'text/plain').send('x'),
      ],
      [
        'post',
        '/payment-links/{id}/sessions',
        () => kassa.http.post(`/payment-links/${usedUp}/sessions`).send({ email: 'payer@example.com' }),
      ],
      [
        'post',
        '/payment-links/{id}/sessions',
        () => kassa.http.post(`/payment-links/${inactive}/sessions`).send({ email: 'payer@example.com' }),
      ],
      // Refunds: the session is open, so a create is refused (409); a paid one is refunded in refunds-rest.test.ts.
      [
        'post',
        '/checkout-sessions/{id}/refunds',
        () => signedRequest(kassa, merchant, 'post', `/checkout-sessions/${id}/refunds`, { kind: 'full' }),
      ],
      [
        'post',
        '/checkout-sessions/{id}/refunds',
        () => signedRequest(kassa, merchant, 'post', `/checkout-sessions/${id}/refunds`, {}),
      ],
      [
        'post',
        '/checkout-sessions/{id}/refunds',
        () => signedRequest(kassa, merchant, 'post', `/checkout-sessions/${missing}/refunds`, { kind: 'full' }),
      ],
      ['post', '/checkout-sessions/{id}/refunds', () => kassa.http.post(`/checkout-sessions/${id}/refunds`).send({})],
      [
        'post',
        '/checkout-sessions/{id}/refunds',
        () => signed(kassa.http.post(`/checkout-sessions/${id}/refunds`), merchant, 'x', { contentType: 'text/plain' }),
      ],
      [
        'post',
        '/checkout-sessions/{id}/refunds',
        () => signed(kassa.http.post(`/checkout-sessions/${id}/refunds`), merchant, big),
      ],
      [
        'get',
        '/checkout-sessions/{id}/refunds',
        () => signedRequest(kassa, merchant, 'get', `/checkout-sessions/${id}/refunds`),
      ],
      [
        'get',
        '/checkout-sessions/{id}/refunds',
        () => signedRequest(kassa, merchant, 'get', `/checkout-sessions/${missing}/refunds`),
      ],
      [
        'get',
        '/checkout-sessions/{id}/refunds',
        () => signedRequest(kassa, merchant, 'get', '/checkout-sessions/nope/refunds'),
      ],
      ['get', '/checkout-sessions/{id}/refunds', () => kassa.http.get(`/checkout-sessions/${id}/refunds`)],
      ['get', '/refunds/{id}', () => signedRequest(kassa, merchant, 'get', `/refunds/${missing}`)],
      ['get', '/refunds/{id}', () => signedRequest(kassa, merchant, 'get', '/refunds/nope')],
      ['get', '/refunds/{id}', () => kassa.http.get(`/refunds/${missing}`)],
      ['post', '/refunds/{id}/cancel', () => signedRequest(kassa, merchant, 'post', `/refunds/${missing}/cancel`)],
      ['post', '/refunds/{id}/cancel', () => signedRequest(kassa, merchant, 'post', '/refunds/nope/cancel')],
      ['post', '/refunds/{id}/cancel', () => kassa.http.post(`/refunds/${missing}/cancel`)],
      ['get', '/brand/logo/{sha256}', () => kassa.http.get(`/brand/logo/${logo}`)],
      ['get', '/brand/logo/{sha256}', () => kassa.http.get('/brand/logo/nope')],
      ['get', '/brand/logo/{sha256}', () => kassa.http.get(`/brand/logo/${'0'.repeat(64)}`)],
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

/**
 * A small JSON Schema checker for the subset /openapi.json uses ($ref, type
 * with null, enum, const, pattern, format uuid/date-time/uri, minimum/maximum,
 * properties, required, additionalProperties: false, items, oneOf, allOf).
 * Written here rather than adding a validator package: the subset is small and
 * an unsupported keyword fails the test instead of being ignored.
 */
const SUPPORTED = new Set([
  '$ref',
  'type',
  'enum',
  'const',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'oneOf',
  'allOf',
  'description',
  'default',
]);

function validate(schema: any, value: unknown, path: string, root: any): string[] {
  for (const key of Object.keys(schema))
    if (!SUPPORTED.has(key)) return [`${path}: schema keyword ${key} is not supported by this checker`];
  if (schema.$ref) {
    const target = (schema.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: any, part: string) => node?.[part], root);
    if (!target) return [`${path}: unresolved ${schema.$ref}`];
    const problems = validate(target, value, path, root);
    if (problems.length) return problems;
  }
  if (schema.oneOf) {
    const matching = (schema.oneOf as any[]).filter(
      (option) => validate(option, value, path, root).length === 0,
    ).length;
    if (matching !== 1) return [`${path}: ${JSON.stringify(value)} matches ${matching} of oneOf`];
  }
  if (schema.allOf)
    for (const part of schema.allOf) {
      const problems = validate(part, value, path, root);
      if (problems.length) return problems;
    }
  if (schema.type !== undefined) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    const ok = types.some(
      (type) => type === actual || (type === 'integer' && actual === 'number' && Number.isInteger(value)),
    );
    if (!ok) return [`${path}: ${JSON.stringify(value)} is not ${types.join(' or ')}`];
  }
  if (schema.enum && !schema.enum.includes(value))
    return [`${path}: ${JSON.stringify(value)} is not one of ${schema.enum.join(', ')}`];
  if ('const' in schema && schema.const !== value)
    return [`${path}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`];
  const problems: string[] = [];
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value))
      problems.push(`${path}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
    if (schema.format === 'uuid' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value))
      problems.push(`${path}: ${value} is not a uuid`);
    if (
      schema.format === 'date-time' &&
      (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) || Number.isNaN(Date.parse(value)))
    )
      problems.push(`${path}: ${value} is not a date-time`);
    if (schema.format === 'uri' && !URL.canParse(value)) problems.push(`${path}: ${value} is not a uri`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${path}: ${value} < ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${path}: ${value} > ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((item, index) => problems.push(...validate(schema.items, item, `${path}[${index}]`, root)));
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in object)) problems.push(`${path}: ${name} is missing`);
    for (const [name, child] of Object.entries(object)) {
      const property = schema.properties?.[name];
      if (property) problems.push(...validate(property, child, `${path}.${name}`, root));
      else if (schema.additionalProperties === false) problems.push(`${path}: ${name} is not documented`);
    }
  }
  return problems;
}

describe('the documented response schemas match real responses', () => {
  const responseSchema = (path: string, method: string, status: number) =>
    (
      document.paths[path]![method]!.responses[String(status)] as {
        content: { 'application/json': { schema: unknown } };
      }
    ).content['application/json'].schema;
  const check = (path: string, method: string, response: { status: number; body: unknown }) => {
    const problems = validate(
      responseSchema(path, method, response.status),
      response.body,
      `${method.toUpperCase()} ${path} ${response.status}`,
      document,
    );
    expect(problems).toEqual([]);
  };

  it('the checker rejects what it should (undocumented field, missing field, wrong type, null where not allowed, bad amount)', () => {
    const schema = (document as any).components.schemas.BindResponse;
    const good = {
      session_id: '00000000-0000-4000-8000-000000000000',
      bound_tx_hash: `0x${'a'.repeat(64)}`,
      crypto_currency: 'ETH',
      total_amount_crypto: '0.01000000',
      status: 'waiting_payment',
      idempotent: false,
    };
    expect(validate(schema, good, 'x', document)).toEqual([]);
    expect(validate(schema, { ...good, extra: 1 }, 'x', document)).toHaveLength(1);
    expect(validate(schema, { ...good, idempotent: 'no' }, 'x', document)).toHaveLength(1);
    expect(validate(schema, { ...good, status: 'nope' }, 'x', document)).toHaveLength(1);
    expect(validate(schema, { ...good, total_amount_crypto: '0.01' }, 'x', document)).toHaveLength(1);
    expect(validate(schema, { ...good, total_amount_crypto: null }, 'x', document)).toHaveLength(1);
    const { idempotent: _gone, ...missing } = good;
    expect(validate(schema, missing, 'x', document)).toEqual(['x: idempotent is missing']);
  });

  it('the session schemas list exactly the fields of the public and merchant views, every one required', () => {
    const schemas = (document as any).components.schemas;
    expect(Object.keys(schemas.PublicSession.properties).sort()).toEqual([...PUBLIC_FIELDS].sort());
    expect(schemas.PublicSession.required.sort()).toEqual([...PUBLIC_FIELDS].sort());
    expect(Object.keys(schemas.MerchantSession.properties).sort()).toEqual(
      [...PUBLIC_FIELDS, ...MERCHANT_ONLY_FIELDS].sort(),
    );
    expect(schemas.MerchantSession.required.sort()).toEqual([...PUBLIC_FIELDS, ...MERCHANT_ONLY_FIELDS].sort());
    for (const [name, schema] of Object.entries<any>(schemas)) {
      if (schema.type === 'object' && name !== 'Error')
        expect(Object.keys(schema.properties).sort(), name).toEqual([...schema.required].sort());
    }
  });

  it('the headers a create replay and a (conditional) read answer with are documented, and the 304', async () => {
    const body = checkoutRequest();
    const first = await postCreate(kassa, merchant, body, { idempotencyKey: 'doc-1' });
    const again = await postCreate(kassa, merchant, body, { idempotencyKey: 'doc-1' });
    expect([first.status, again.status, again.headers['idempotent-replayed']]).toEqual([201, 201, 'true']);
    const create = (document as any).paths['/checkout-sessions'].post;
    expect(Object.keys(create.responses['201'].headers)).toEqual(['Idempotent-Replayed']);
    expect(create.responses['503'].headers['Retry-After']).toBeDefined();

    const read = await kassa.http.get(`/checkout-sessions/${first.body.session_id}`);
    const etag = read.headers.etag as string;
    expect(etag).toBeTruthy();
    const unchanged = await kassa.http.get(`/checkout-sessions/${first.body.session_id}`).set('If-None-Match', etag);
    expect(unchanged.status).toBe(304);
    const get = (document as any).paths['/checkout-sessions/{id}'].get;
    expect(Object.keys(get.responses['200'].headers).sort()).toEqual(['Cache-Control', 'ETag']);
    expect(read.headers['cache-control']).toBe('no-cache');
    expect(get.responses['304']).toBeDefined();
    expect(get.parameters.map((parameter: { name: string }) => parameter.name)).toContain('If-None-Match');
  });

  it('create, get, bind (fresh and replayed), webhook endpoints, events and errors validate against their schemas', async () => {
    const created = await signedRequest(
      kassa,
      merchant,
      'post',
      '/checkout-sessions',
      checkoutRequest({ metadata: { order: 'A-1' } }),
    );
    expect(created.status).toBe(201);
    check('/checkout-sessions', 'post', created);
    const id = created.body.session_id as string;

    const read = await kassa.http.get(`/checkout-sessions/${id}`);
    expect(read.status).toBe(200);
    check('/checkout-sessions/{id}', 'get', read);

    const bindBody = {
      tx_hash: txHash(0xb01),
      chain_id: '31337',
      crypto_currency: 'ETH',
      payer_wallet_address: `0x${'1'.repeat(40)}`,
    };
    const bound = await kassa.http.post(`/checkout-sessions/${id}/bind-tx`).send(bindBody);
    expect(bound.status).toBe(200);
    check('/checkout-sessions/{id}/bind-tx', 'post', bound);
    const replayed = await kassa.http.post(`/checkout-sessions/${id}/bind-tx`).send(bindBody);
    expect(replayed.body.idempotent).toBe(true);
    check('/checkout-sessions/{id}/bind-tx', 'post', replayed);
    // Once a transaction is verified the nullable fields are set (here written as the verification would): the view still validates.
    await kassa.runtime.db.prisma.checkoutSession.update({
      where: { id },
      data: {
        cryptoCurrency: 'ETH',
        totalAmountCrypto: '0.02876358',
        chainId: '31337',
        boundTxHash: bindBody.tx_hash,
        payerWalletAddress: bindBody.payer_wallet_address,
      },
    });
    const afterBind = await kassa.http.get(`/checkout-sessions/${id}`);
    expect(afterBind.body.bound_tx_hash).not.toBeNull();
    check('/checkout-sessions/{id}', 'get', afterBind);

    const endpoint = await signedRequest(kassa, merchant, 'post', '/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['checkout_session.paid'],
    });
    check('/webhook-endpoints', 'post', endpoint);
    check('/webhook-endpoints', 'get', await signedRequest(kassa, merchant, 'get', '/webhook-endpoints'));
    check(
      '/webhook-endpoints/{id}',
      'get',
      await signedRequest(kassa, merchant, 'get', `/webhook-endpoints/${endpoint.body.id}`),
    );
    check(
      '/webhook-endpoints/{id}',
      'patch',
      await signedRequest(kassa, merchant, 'patch', `/webhook-endpoints/${endpoint.body.id}`, { enabled: false }),
    );
    const rotated = await signedRequest(
      kassa,
      merchant,
      'post',
      `/webhook-endpoints/${endpoint.body.id}/rotate-secret`,
      {},
    );
    expect(rotated.body.previous_secret_expires_at).not.toBeNull();
    check('/webhook-endpoints/{id}/rotate-secret', 'post', rotated);

    const events = await signedRequest(kassa, merchant, 'get', `/events?session_id=${id}`);
    expect(events.status).toBe(200);
    expect(events.body.data.length).toBeGreaterThan(0);
    check('/events', 'get', events);

    const link = await signedRequest(
      kassa,
      merchant,
      'post',
      '/payment-links',
      paymentLinkRequest({
        metadata: { sku: 'x' },
        max_uses: 2,
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    );
    check('/payment-links', 'post', link);
    check(
      '/payment-links',
      'post',
      await signedRequest(
        kassa,
        merchant,
        'post',
        '/payment-links',
        paymentLinkRequest({ items: undefined, amount_fiat: { min: 1, max: 9 } }),
      ),
    );
    check('/payment-links', 'get', await signedRequest(kassa, merchant, 'get', '/payment-links'));
    check(
      '/payment-links/{id}',
      'get',
      await signedRequest(kassa, merchant, 'get', `/payment-links/${link.body.payment_link_id}`),
    );
    check(
      '/payment-links/{id}',
      'patch',
      await signedRequest(kassa, merchant, 'patch', `/payment-links/${link.body.payment_link_id}`, { max_uses: null }),
    );
    const visit = await kassa.http
      .post(`/payment-links/${link.body.payment_link_id}/sessions`)
      .send({ email: 'payer@example.com' });
    expect(visit.status).toBe(201);
    check('/payment-links/{id}/sessions', 'post', visit);
    check(
      '/payment-links/{id}/sessions',
      'post',
      await kassa.http.post(`/payment-links/${link.body.payment_link_id}/sessions`).send({}),
    );
    check('/health', 'get', await kassa.http.get('/health'));
    check('/ready', 'get', await kassa.http.get('/ready'));
    check('/webhook-endpoints/{id}', 'get', await signedRequest(kassa, merchant, 'get', '/webhook-endpoints/nope'));
    check('/events', 'get', await signedRequest(kassa, merchant, 'get', '/events?limit=1&limit=2'));
    check('/checkout-sessions', 'post', await signedRequest(kassa, merchant, 'post', '/checkout-sessions', {}));
    check(
      '/checkout-sessions/{id}',
      'get',
      await kassa.http.get('/checkout-sessions/00000000-0000-4000-8000-000000000000'),
    );
    check(
      '/checkout-sessions/{id}/bind-tx',
      'post',
      await kassa.http.post(`/checkout-sessions/${id}/bind-tx`).send({ ...bindBody, crypto_currency: 'BTC' }),
    );
  });
});
