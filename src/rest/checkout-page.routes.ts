import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Router, type RequestHandler, type Response } from 'express';
import QRCode from 'qrcode';
import type { DomainContext } from '../domain/context.js';
import { DomainError } from '../domain/errors.js';
import { getCheckoutSession } from '../domain/get-checkout-session.js';
import { paymentInstructions } from '../domain/payment-instructions.js';
import { methodNotAllowed } from './error-handler.js';

export interface CheckoutPageOptions {
  /** Development only: the page tells the payer how to pay on the sandbox chain (`npx kassa dev pay`). */
  readonly developmentHints?: boolean;
}

/**
 * The page loads nothing from elsewhere and runs no inline code: its script and
 * styles are files from here, its data comes from /graphql (HTTP and WebSocket).
 */
export const CHECKOUT_PAGE_CSP =
  "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// web/ sits beside src/ and dist/, so the same path works from tsc output and from vitest.
const WEB_DIR = fileURLToPath(new URL('../../web/', import.meta.url));
const ASSETS: Record<string, string> = { 'pay.js': 'text/javascript', 'pay.css': 'text/css' };
const PAGE_DATA_SLOT = '<!--kassa:page-data-->';

/** The hosted checkout page (`checkout_url`), its script and styles, and the payment QR code. */
export function checkoutPageRouter(ctx: DomainContext, options: CheckoutPageOptions = {}): Router {
  const template = readFileSync(`${WEB_DIR}pay.html`, 'utf8');
  if (!template.includes(PAGE_DATA_SLOT)) throw new Error(`web/pay.html lacks ${PAGE_DATA_SLOT}`);
  const router = Router();
  router.use('/pay', pageHeaders);

  for (const [file, type] of Object.entries(ASSETS)) {
    router.get(`/pay/assets/${file}`, (_req, res) => {
      res.type(type).set('Cache-Control', 'no-cache').sendFile(`${WEB_DIR}${file}`);
    });
  }

  router.get('/pay/:id', async (req, res) => {
    const session = await readSessionForPage(ctx, req.params.id, res);
    if (!session) return;
    // Wallets are a snapshot taken at creation; GraphQL's walletAddress names only one of them.
    const pageData = {
      sessionId: session.id,
      wallets: Object.fromEntries(session.networks.map((n) => [n.network, n.walletAddress])),
      developmentHints: options.developmentHints === true,
    };
    res.status(200).type('html').send(template.replace(PAGE_DATA_SLOT, jsonScript('kassa-page-data', pageData)));
  });
  router.all('/pay/:id', methodNotAllowed(['GET']));

  router.get('/pay/:id/qr.svg', async (req, res) => {
    const session = await getCheckoutSession(ctx, req.params.id);
    const instructions = paymentInstructions(ctx, session, { network: req.query.network, asset: req.query.asset });
    const svg = await QRCode.toString(instructions.uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    res.status(200).type('image/svg+xml').set('X-Payment-Uri', instructions.uri).send(svg);
  });
  router.all('/pay/:id/qr.svg', methodNotAllowed(['GET']));

  return router;
}

const pageHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'Content-Security-Policy': CHECKOUT_PAGE_CSP,
    'X-Content-Type-Options': 'nosniff',
    // The session id is in the URL: never hand it to another site.
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  });
  next();
};

/** A browser asked for the page: a bad or unknown id gets a readable page with the right status, not JSON. */
async function readSessionForPage(ctx: DomainContext, id: string, res: Response) {
  try {
    return await getCheckoutSession(ctx, id);
  } catch (error) {
    if (!(error instanceof DomainError) || (error.code !== 'invalid' && error.code !== 'not_found')) throw error;
    const [status, title, text] =
      error.code === 'invalid'
        ? [400, 'This payment link is not valid', 'The link is incomplete or mistyped. Open the link the merchant sent you again, or ask the merchant for a new one.']
        : [404, 'This checkout does not exist', 'There is no checkout session at this link. Ask the merchant for a new payment link.'];
    res.status(status).type('html').send(messagePage(title, text));
    return null;
  }
}

function messagePage(title: string, text: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/pay/assets/pay.css">
</head>
<body>
<main class="card message-page">
<h1>${title}</h1>
<p>${text}</p>
</main>
</body>
</html>
`;
}

/** JSON inside a non-executed script element: `<` is escaped so no value can close the element. */
function jsonScript(id: string, data: unknown): string {
  return `<script type="application/json" id="${id}">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>`;
}
