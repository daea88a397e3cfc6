import { Router } from 'express';
import type { z } from 'zod';
import { methodNotAllowed } from '../http/error-handler.js';
import { componentName, components, ref } from './openapi-components.js';
import { jsonSchemaOf, type Json } from './openapi-json-schema.js';
import { ROUTES, type RouteDoc } from './openapi-routes.js';

export { ROUTES, type RouteDoc } from './openapi-routes.js';

/**
 * The REST API's OpenAPI 3.1 document (docs/api/webhooks.md#openapi), assembled from the route table and the zod
 * schemas the routes validate with, and its HTML page; test/e2e/openapi.test.ts checks it against what Express serves.
 */

const json = (schema: Json) => ({ 'application/json': { schema } });

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid input: `message` lists every problem',
  401: 'Missing or wrong signature headers (docs/api/rest.md#signing-a-merchant-call)',
  404: 'Not found',
  409: 'Conflict with the current state',
  413: 'Body over 100 KB',
  415: 'Content-Type is not application/json, or the body is encoded',
  422: 'The organisation has no receiving wallet on an enabled network',
  410: 'The payment link is inactive or expired',
  429: 'Over a rate limit (docs/api/rest.md#rate-limits); Retry-After says in how many seconds to try again',
  500: 'Internal server error (details only in the log)',
  503: 'A dependency is unavailable',
};

/** A response schema: its component's `$ref`, or the schema itself when the route describes it inline. */
function responseSchema(schema: z.ZodType): Json {
  const name = componentName(schema);
  return name ? ref(name) : jsonSchemaOf(schema, 'output');
}

/** Express `:id` → OpenAPI `{id}`. */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

export function buildOpenApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const route of ROUTES) {
    const parameters: Json[] = [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string', format: 'uuid' },
    }));
    if (route.query) {
      const schema = jsonSchemaOf(route.query) as { properties?: Record<string, Json>; required?: string[] };
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        const { description, ...rest } = property;
        parameters.push({
          name,
          in: 'query',
          required: schema.required?.includes(name) ?? false,
          schema: rest,
          ...(description ? { description } : {}),
        });
      }
    }
    if (route.conditional)
      parameters.push({
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'The ETag of an answer held: 304 with no body while it is still current',
        schema: { type: 'string' },
      });
    for (const header of route.headers ?? [])
      parameters.push({
        name: header.name,
        in: 'header',
        required: false,
        description: header.description,
        schema: { type: 'string' },
      });
    const okHeaders = Object.entries(route.ok.headers ?? {}).map(([name, description]) => [
      name,
      { description, schema: { type: 'string' } },
    ]);
    const responses: Record<string, Json> = {
      [route.ok.status]: {
        description: route.ok.description,
        ...(okHeaders.length ? { headers: Object.fromEntries(okHeaders) } : {}),
        ...(route.ok.schema
          ? { content: json(responseSchema(route.ok.schema)) }
          : route.ok.contentType
            ? { content: { [route.ok.contentType]: { schema: { type: 'string' } } } }
            : {}),
      },
    };
    if (route.conditional)
      responses[304] = { description: 'Not modified: the ETag sent in If-None-Match is current (no body)' };
    for (const status of [...route.errors, 500]) {
      const retryAfter =
        status === 429 || status === 503
          ? {
              headers: {
                'Retry-After': {
                  description:
                    status === 429
                      ? 'Seconds until the limit lets a request through again (its window ends, or the create bucket ' +
                        'has a token back)'
                      : 'Seconds to wait, when the database is unavailable (absent when no exchange rate is usable)',
                  schema: { type: 'integer', minimum: 1 },
                },
              },
            }
          : {};
      responses[status] = { description: ERROR_TEXT[status] ?? 'Error', ...retryAfter, content: json(ref('Error')) };
    }
    const body = route.body ? jsonSchemaOf(route.body) : null;
    const operation: Json = {
      summary: route.summary,
      ...(route.signed ? { description: signingNote(route) } : {}),
      operationId: `${route.method}${route.path.replace(/[^a-zA-Z]+(\w)/g, (_m, c: string) => c.toUpperCase()).replace(/[^a-zA-Z]/g, '')}`,
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: true, content: json(body) } } : {}),
      responses,
      ...(route.signed ? { security: [{ ServiceKey: [], ServiceTimestamp: [], ServiceSignature: [] }] } : {}),
    };
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Kassa REST API',
      version: '1.0.0',
      description:
        'Self-hosted crypto checkout. Every error has the body {statusCode, message, error}; a method a path does ' +
        'not serve answers 405 with Allow; a request over a rate limit answers 429 with Retry-After (seconds). ' +
        'Signed operations carry X-Service-Key, X-Service-Timestamp and X-Service-Signature (see the ' +
        'ServiceSignature scheme): create signs `{timestamp}.{rawBody}`, every other signed operation ' +
        '`{timestamp}.{METHOD}.{path?query}.{rawBody}`, and a signature is accepted once. ' +
        'Webhooks POST the Event schema with X-Service-Event-Id, X-Service-Timestamp and X-Service-Signature.',
    },
    paths,
    components: components(),
  };
}

/** The string an operation's X-Service-Signature is the HMAC of. */
function signingNote(route: RouteDoc): string {
  const once = 'Each signature is accepted once: a replay answers 401.';
  if (route.signed === 'body')
    return (
      'Signed (docs/api/rest.md#signing-a-merchant-call): X-Service-Signature is the hex HMAC-SHA256 of ' +
      `\`{timestamp}.{rawBody}\`. ${once}`
    );
  const query = route.query ? '?…{query as sent}' : '';
  const body = route.method === 'get' || route.method === 'delete' ? '' : '{rawBody}';
  return (
    `Signed: X-Service-Signature is the hex HMAC-SHA256 of ` +
    `\`{timestamp}.${route.method.toUpperCase()}.${openApiPath(route.path)}${query}.${body}\`` +
    `${query ? ' (without `?…` when there is no query)' : ''}, with the path and query exactly as sent. ${once}`
  );
}

const escape = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A plain HTML rendering of the document: no scripts, no CDN. */
export function renderDocsPage(document: Json): string {
  const paths = document.paths as Record<string, Record<string, Json>>;
  const sections = Object.entries(paths)
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => {
        const responses = Object.entries(operation.responses as Record<string, { description: string }>)
          .map(([status, response]) => `<li><code>${status}</code> ${escape(response.description)}</li>`)
          .join('');
        const body = (operation.requestBody as { content: Record<string, { schema: Json }> } | undefined)?.content[
          'application/json'
        ]?.schema;
        return `<section><h2><code>${method.toUpperCase()} ${escape(path)}</code>${
          operation.security ? ' ' + '<small>signed</small>' : ''
        }</h2><p>${escape(String(operation.summary))}</p>${
          body
            ? `<details><summary>Request body</summary><pre>${escape(JSON.stringify(body, null, 2))}</pre></details>`
            : ''
        }<ul>${responses}</ul></section>`;
      }),
    )
    .join('\n');
  const info = document.info as { title: string; version: string; description: string };
  const style =
    'body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}' +
    'code,pre{background:#f4f4f4}pre{padding:.5rem;overflow:auto}small{color:#a60}';
  return [
    `<!doctype html><html lang="en"><head><meta charset="utf-8">`,
    `<title>${escape(info.title)} ${info.version}</title><style>${style}</style></head><body>`,
    `<h1>${escape(info.title)} <small>${info.version}</small></h1><p>${escape(info.description)}</p>`,
    `<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>${sections}</body></html>`,
  ].join('');
}

export function openApiRouter(): Router {
  const router = Router();
  const document = buildOpenApiDocument();
  const page = renderDocsPage(document);
  router.get('/openapi.json', (_req, res) => void res.json(document));
  router.all('/openapi.json', methodNotAllowed(['GET']));
  router.get('/docs', (_req, res) => void res.type('html').send(page));
  router.all('/docs', methodNotAllowed(['GET']));
  return router;
}
