import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config.js';
import { renderClientTypes } from '../../src/rest/client-types.js';
import { buildOpenApiDocument } from '../../src/rest/openapi.js';

/** Where `npm run client:types` writes the client's types (src/rest/emit-client-types.ts). */
const CLIENT_TYPES_FILE = path.join(PACKAGE_ROOT, 'clients/typescript/src/types.ts');

/** The TypeScript client's types are generated from the OpenAPI document, which is generated from the zod schemas. */
describe('clients/typescript/src/types.ts', () => {
  it('is what the OpenAPI document renders', () => {
    const committed = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    const rendered = renderClientTypes(buildOpenApiDocument());
    if (rendered !== committed) {
      // toBe shows the diff; the message says how to fix it.
      const fix = 'clients/typescript/src/types.ts is out of date with /openapi.json: run `npm run client:types`';
      expect(rendered, fix).toBe(committed);
    }
  });

  it('names every response component and every request body', () => {
    const rendered = renderClientTypes(buildOpenApiDocument());
    const responses = ['PublicSession', 'MerchantSession', 'BindResponse', 'EventPage', 'WebhookEndpoint'];
    const requests = ['CreateCheckoutRequest', 'BindTransactionRequest', 'CreateWebhookEndpointRequest'];
    for (const name of [...responses, ...requests]) expect(rendered).toContain(`export interface ${name} {`);
    // A session's event or the organisation's funds.collected: `type` tells which.
    expect(rendered).toContain('export type Event = {');
    const statuses = "'pending' | 'waiting_payment' | 'partial' | 'paid' | 'expired' | 'failed'";
    expect(rendered).toContain(`export type CheckoutStatus = ${statuses};`);
  });

  it('refuses a schema keyword it does not understand instead of writing a wrong type', () => {
    const odd = { type: 'object', properties: { a: { not: { type: 'string' } } } };
    const document = { paths: {}, components: { schemas: { Odd: odd } } };
    expect(() => renderClientTypes(document)).toThrow('components.schemas.Odd.a: JSON Schema keyword not is not');
  });
});
