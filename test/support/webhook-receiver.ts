import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP server standing in for a merchant's webhook endpoint. */
export interface ReceivedWebhook {
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  readonly body: { id: string; type: string; created_at: string; data: Record<string, any> };
  readonly at: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedWebhook[];
  /** What to answer next: a queue of behaviours, then `fallback` (default 200). */
  respond(...behaviours: Behaviour[]): void;
  fallback: Behaviour;
  /** Resolves once `predicate` holds for the received list (polls), or throws after `timeoutMs`. */
  waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A status code to answer with, or `hang` to never answer within the test's timeout. */
export type Behaviour = { status: number; body?: string } | { hang: number };

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const queue: Behaviour[] = [];
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const behaviour = queue.shift() ?? receiver.fallback;
      if ('hang' in behaviour) {
        setTimeout(() => {
          if (!res.destroyed) res.writeHead(200).end('late');
        }, behaviour.hang);
        return;
      }
      received.push({ headers: req.headers, rawBody, body: JSON.parse(rawBody), at: Date.now() });
      res
        .writeHead(behaviour.status, { 'Content-Type': 'text/plain' })
        .end(behaviour.body ?? `answered ${behaviour.status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.address() as AddressInfo).port;
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${actualPort}/hooks`,
    port: actualPort,
    received,
    fallback: { status: 200 },
    respond: (...behaviours) => void queue.push(...behaviours),
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline)
          throw new Error(
            `receiver did not get what was expected within ${timeoutMs} ms; got ${JSON.stringify(received.map((r) => r.body.type))}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return receiver;
}

/** Verifies X-Service-Signature the way docs/api/webhooks.md tells merchants to, independently of src/. */
export function signatureValid(secret: string, headers: IncomingHttpHeaders, rawBody: string): boolean {
  const timestamp = String(headers['x-service-timestamp']);
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  return String(headers['x-service-signature'])
    .split(',')
    .some((candidate) => {
      const given = Buffer.from(candidate, 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
