import type { Command } from 'commander';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../domain/webhooks/webhook-ports.js';
import {
  createWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhook,
  removeWebhookEndpoint,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '../domain/webhooks/webhook-endpoints.js';
import { toDeliveryView, toEndpointView } from '../domain/webhooks/webhook.views.js';
import { invalid } from '../domain/shared/errors.js';
import { sendWebhookTestEvent } from '../domain/dashboard/webhooks/webhook-test-event.js';
import { postJson } from '../webhooks/http-post.js';
import { printJson, printLine } from './output.js';
import { withRuntime } from './with-runtime.js';

function printEndpoint(endpoint: WebhookEndpointRecord): void {
  const events = endpoint.events.length ? endpoint.events.join(',') : 'all events';
  printLine(`${endpoint.id}  ${endpoint.enabled ? 'enabled ' : 'disabled'}  ${endpoint.url}  (${events})`);
}

function printDelivery(delivery: WebhookDeliveryRecord): void {
  const last = delivery.lastStatus ?? delivery.lastError ?? '-';
  printLine(
    `${delivery.id}  ${delivery.status.padEnd(9)}  ${delivery.eventType}  event ${delivery.eventId}  attempts ` +
      `${delivery.attempts}  last ${last}`,
  );
}

export function registerWebhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description("an organisation's webhook endpoints and their deliveries");

  webhooks
    .command('add')
    .description('register a webhook endpoint (its signing secret is shown only here)')
    .requiredOption('--org <id>', 'organisation id')
    .requiredOption('--url <url>', 'http(s) URL events are POSTed to')
    .option('--events <types>', 'comma-separated event types (default: every type)')
    .option('--disabled', 'register it disabled')
    .option('--json', 'print one JSON object')
    .action(async (options: { org: string; url: string; events?: string; disabled?: boolean; json?: boolean }) => {
      const events =
        options.events === undefined
          ? undefined
          : options.events
              .split(',')
              .map((type) => type.trim())
              .filter(Boolean);
      const { endpoint, secret } = await withRuntime((ctx) =>
        createWebhookEndpoint(ctx, options.org, { url: options.url, events, enabled: !options.disabled }),
      );
      if (options.json) return printJson({ ...toEndpointView(endpoint), secret });
      printEndpoint(endpoint);
      printLine(`secret: ${secret}`);
      printLine('The secret is shown only now: store it safely.');
    });

  webhooks
    .command('list')
    .description("list an organisation's webhook endpoints (never their secrets)")
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'print a JSON array')
    .action(async (options: { org: string; json?: boolean }) => {
      const list = await withRuntime((ctx) => listWebhookEndpoints(ctx, options.org));
      if (options.json) return printJson(list.map((endpoint) => toEndpointView(endpoint)));
      list.forEach(printEndpoint);
    });

  webhooks
    .command('remove')
    .description('delete a webhook endpoint and its delivery history')
    .argument('<id>', 'webhook endpoint id')
    .action(async (id: string) => {
      await withRuntime((ctx) => removeWebhookEndpoint(ctx, null, id));
      printLine(`removed ${id}`);
    });

  for (const [name, enabled, what] of [
    ['disable', false, 'stop delivering to an endpoint (its secret and history are kept)'],
    ['enable', true, 'deliver to an endpoint again: events written from now on'],
  ] as const)
    webhooks
      .command(name)
      .description(what)
      .argument('<id>', 'webhook endpoint id')
      .action(async (id: string) => {
        printEndpoint(await withRuntime((ctx) => updateWebhookEndpoint(ctx, null, id, { enabled })));
      });

  webhooks
    .command('test')
    .description('send an endpoint a signed test event (type kassa.test) now and print what it answered')
    .argument('<id>', 'webhook endpoint id')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: { json?: boolean }) => {
      const result = await withRuntime((ctx) =>
        sendWebhookTestEvent(ctx, null, id, (url, body, headers) =>
          postJson(url, body, headers, {
            timeoutMs: ctx.webhooks.timeoutMs,
            allowPrivate: ctx.webhooks.allowPrivate,
            httpsOnly: ctx.webhooks.httpsOnly,
            resolveHost: ctx.resolveHost,
          }),
        ),
      );
      if (options.json)
        return printJson({
          http_status: result.httpStatus,
          latency_ms: result.latencyMs,
          error: result.error,
          response: result.response,
        });
      printLine(`${result.httpStatus === null ? 'no answer' : `HTTP ${result.httpStatus}`} in ${result.latencyMs} ms`);
      if (result.error && result.error !== `HTTP ${result.httpStatus}`) printLine(result.error);
      if (result.response) printLine(result.response);
    });

  webhooks
    .command('rotate-secret')
    .description('issue a new signing secret; the old one keeps signing for KASSA_WEBHOOK_SECRET_OVERLAP_HOURS')
    .argument('<id>', 'webhook endpoint id')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: { json?: boolean }) => {
      const { endpoint, secret, previousSecretExpiresAt } = await withRuntime((ctx) =>
        rotateWebhookSecret(ctx, null, id),
      );
      if (options.json)
        return printJson({
          ...toEndpointView(endpoint),
          secret,
          previous_secret_expires_at: previousSecretExpiresAt.toISOString(),
        });
      printLine(`secret: ${secret}`);
      printLine(`the previous secret keeps signing until ${previousSecretExpiresAt.toISOString()}`);
    });

  webhooks
    .command('deliveries')
    .description("an endpoint's deliveries, newest event first, with every attempt")
    .requiredOption('--endpoint <id>', 'webhook endpoint id')
    .option('--limit <n>', 'at most this many (1-1000)', '100')
    .option('--json', 'print a JSON array')
    .action(async (options: { endpoint: string; limit: string; json?: boolean }) => {
      if (!/^\d+$/.test(options.limit) || Number(options.limit) < 1 || Number(options.limit) > 1000)
        throw invalid('--limit must be a whole number from 1 to 1000');
      const limit = Number(options.limit);
      const list = await withRuntime((ctx) => listWebhookDeliveries(ctx, null, options.endpoint, limit));
      if (options.json) return printJson(list.map(toDeliveryView));
      list.forEach(printDelivery);
    });

  webhooks
    .command('redeliver')
    .description('deliver again now: a delivery id, or an event id (to every matching endpoint of its organisation)')
    .argument('<id>', 'delivery id or event id')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: { json?: boolean }) => {
      const result = await withRuntime((ctx) => redeliverWebhook(ctx, id));
      if (options.json) return printJson({ kind: result.kind, delivery_ids: result.deliveryIds });
      printLine(
        `queued ${result.deliveryIds.length} ${result.deliveryIds.length === 1 ? 'delivery' : 'deliveries'}: ` +
          `${result.deliveryIds.join(', ')}`,
      );
    });
}
