import { readFileSync } from 'node:fs';
import { Router, type Response } from 'express';
import QRCode from 'qrcode';
import type { DomainContext } from '../domain/context.js';
import { brandingOf } from '../domain/organisations/branding.js';
import type { Branding } from '../domain/organisations/branding-ports.js';
import { DomainError } from '../domain/shared/errors.js';
import { getCheckoutSession } from '../domain/sessions/get-checkout-session.js';
import { paysAtOwnAddress } from '../domain/sessions/checkout-page.js';
import { paymentInstructions } from '../domain/payments/payment-instructions.js';
import { PAGE_DOCUMENT_DATA } from '../graphql/page-documents.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { clientAddressOf } from '../http/client-address.js';
import { rateLimit } from '../domain/organisations/throttle.js';
import {
  brandColors,
  catalogue,
  chooseLanguage,
  HOSTED_PAGE_CSP,
  hostedPageHeaders,
  jsonScript,
  languageSwitch,
  merchantHeader,
  messagePage,
  PAGE_SCRIPTS,
  renderTemplate,
  WEB_DIR,
} from './hosted-page.js';

export interface CheckoutPageOptions {
  /** Development only: the page tells the payer how to pay on the sandbox chain (`npx kassa dev pay`). */
  readonly developmentHints?: boolean;
}

/** The hosted pages' Content-Security-Policy (src/rest/hosted-page.ts). */
export const CHECKOUT_PAGE_CSP = HOSTED_PAGE_CSP;

const ASSETS: Record<string, string> = {
  ...Object.fromEntries(PAGE_SCRIPTS.map((file) => [file, 'text/javascript'])),
  'pay.css': 'text/css',
};
const PAGE_DATA_SLOT = '<!--kassa:page-data-->';

/** The hosted checkout page (`checkout_url`), the pages' scripts and styles, and the payment QR code. */
export function checkoutPageRouter(ctx: DomainContext, options: CheckoutPageOptions = {}): Router {
  const template = readFileSync(`${WEB_DIR}pay.html`, 'utf8');
  if (!template.includes(PAGE_DATA_SLOT)) throw new Error(`web/pay.html lacks ${PAGE_DATA_SLOT}`);
  const router = Router();
  router.use('/pay', hostedPageHeaders);

  for (const [file, type] of Object.entries(ASSETS)) {
    router.get(`/pay/assets/${file}`, (_req, res) => {
      res.type(type).set('Cache-Control', 'no-cache').sendFile(`${WEB_DIR}${file}`);
    });
  }

  router.get('/pay/:id', async (req, res) => {
    const lang = chooseLanguage(req);
    const session = await readSessionForPage(ctx, req.params.id, res, lang);
    if (!session) return;
    const branding = await brandingOf(ctx, session.organisationId);
    // Wallets are a snapshot taken at creation; GraphQL's walletAddress names only one of them.
    const pageData = {
      sessionId: session.id,
      wallets: Object.fromEntries(session.networks.map((n) => [n.network, n.walletAddress])),
      developmentHints: options.developmentHints === true,
      depositAddress: await paysAtOwnAddress(ctx, session.id),
      lang,
      messages: catalogue(lang),
      brand: brandColors(branding),
      addChain: addableChains(ctx),
      // The page's GraphQL documents, by id and text (src/graphql/page-documents.ts).
      documents: PAGE_DOCUMENT_DATA,
    };
    res
      .status(200)
      .type('html')
      .send(
        renderTemplate(template, lang, {
          'page-data': jsonScript('kassa-page-data', pageData),
          merchant: merchantHeader(branding ?? fallbackBranding(session.organisationName), lang),
          languages: languageSwitch(lang, `/pay/${session.id}`),
        }),
      );
  });
  router.all('/pay/:id', methodNotAllowed(['GET']));

  router.get('/pay/:id/qr.svg', async (req, res) => {
    await rateLimit(ctx, ['qr', clientAddressOf(req)]);
    const session = await getCheckoutSession(ctx, req.params.id);
    const instructions = paymentInstructions(ctx, session, { network: req.query.network, asset: req.query.asset });
    const svg = await QRCode.toString(instructions.uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    res.status(200).type('image/svg+xml').set('X-Payment-Uri', instructions.uri).send(svg);
  });
  router.all('/pay/:id/qr.svg', methodNotAllowed(['GET']));

  return router;
}

const fallbackBranding = (name: string | null): Branding | null =>
  name ? { organisationName: name, brandColor: null, logoSha256: null } : null;

/**
 * EIP-3085 parameters only for the development sandbox (`local`) on a loopback RPC URL: wallets know mainnets, and
 * their configured RPC URLs may carry API keys, so they are never shown.
 */
function addableChains(ctx: DomainContext): Record<string, unknown> {
  const chains: Record<string, unknown> = {};
  for (const network of ctx.networks) {
    const url = network.rpcUrls[0];
    if (network.slug !== 'local' || !url || !/^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?\/?$/.test(url)) continue;
    chains[network.slug] = {
      chainId: `0x${network.chainId.toString(16)}`,
      chainName: network.name,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: [url],
    };
  }
  return chains;
}

/** A browser asked for the page: a bad or unknown id gets a readable page with the right status, not JSON. */
async function readSessionForPage(ctx: DomainContext, id: string, res: Response, lang: string) {
  try {
    return await getCheckoutSession(ctx, id);
  } catch (error) {
    if (!(error instanceof DomainError) || (error.code !== 'invalid' && error.code !== 'not_found')) throw error;
    const [status, title, text] =
      error.code === 'invalid'
        ? [400, 'message.badLinkTitle', 'message.badLinkText']
        : [404, 'message.noSessionTitle', 'message.noSessionText'];
    res
      .status(status)
      .type('html')
      .send(messagePage(lang, title, text));
    return null;
  }
}
