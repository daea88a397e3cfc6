import { readdirSync, readFileSync } from 'node:fs';
import { Router, type Request, type Response } from 'express';
import type { DomainContext } from '../domain/context.js';
import { brandingOf } from '../domain/organisations/branding.js';
import type { Branding } from '../domain/organisations/branding-ports.js';
import { rateLimit } from '../domain/organisations/throttle.js';
import { openClaim, submitClaim } from '../domain/refunds/claim-link.js';
import { DomainError, invalid } from '../domain/shared/errors.js';
import { formatAmount } from '../domain/shared/money.js';
import { clientAddressOf } from '../http/client-address.js';
import { methodNotAllowed } from '../http/error-handler.js';
import { readJsonBody } from '../http/json-body.js';
import {
  brandColors,
  catalogue,
  chooseLanguage,
  escapeHtml,
  hostedPageHeaders,
  jsonScript,
  languageSwitch,
  merchantHeader,
  WEB_DIR,
  type Catalogue,
} from './hosted-page.js';

/**
 * The refund claim page `{checkout_base_url}/r/<refund id>` and the address it sends (docs/refund-claims.md): the
 * checkout page's styles, languages and headers, its own texts in web/i18n/refunds/<lang>.json.
 */

const REFUND_TEXTS: ReadonlyMap<string, Catalogue> = new Map(
  readdirSync(`${WEB_DIR}i18n/refunds`)
    .filter((name) => /^[a-z]{2}\.json$/.test(name))
    .map((name) => [name.slice(0, 2), JSON.parse(readFileSync(`${WEB_DIR}i18n/refunds/${name}`, 'utf8')) as Catalogue]),
);

/** The page's texts: the shared catalogue (language names, merchant label), then the refund texts (English first). */
export function refundCatalogue(lang: string): Catalogue {
  return { ...catalogue(lang), ...REFUND_TEXTS.get('en'), ...REFUND_TEXTS.get(lang) };
}

function render(template: string, texts: Catalogue, lang: string, slots: Readonly<Record<string, string>>): string {
  return template
    .replace(/\{\{([\w.]+)\}\}/g, (_whole, key: string) => {
      if (key === 'lang') return lang;
      const text = texts[key];
      if (text === undefined) throw new Error(`no text "${key}" in web/i18n/refunds/${lang}.json`);
      return escapeHtml(text);
    })
    .replace(/<!--kassa:([\w-]+)-->/g, (whole, name: string) => slots[name] ?? whole);
}

/** The page a claim that takes no address shows, by the refusal's reason, with the status it answers. */
const REFUSALS: Record<string, [number, string]> = {
  claim_used: [409, 'used'],
  claim_expired: [410, 'expired'],
  refund_state: [410, 'cancelled'],
  validation_failed: [400, 'badLink'],
  not_found: [404, 'unknown'],
};

function refusalPage(lang: string, name: string, branding: Branding | null = null): string {
  const texts = refundCatalogue(lang);
  const title = escapeHtml(texts[`refund.${name}Title`]!);
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/pay/assets/pay.css">
</head>
<body>
<main class="card message-page" id="refund-refused" data-reason="${name}">
${merchantHeader(branding, lang)}
<h1>${title}</h1>
<p>${escapeHtml(texts[`refund.${name}Text`]!)}</p>
</main>
</body>
</html>
`;
}

const claimId = (req: Request) => req.params.id as string;

function readSubmission(req: Request): { address: string; signature: string | null } {
  const body = readJsonBody(req);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid(['body must be a JSON object']);
  const { address, signature, ...rest } = body as Record<string, unknown>;
  const problems = Object.keys(rest).map((key) => `property ${key} should not exist`);
  if (typeof address !== 'string') problems.push('address must be a string');
  if (signature !== undefined && signature !== null && typeof signature !== 'string')
    problems.push('signature must be a string');
  if (problems.length > 0) throw invalid(problems);
  return { address: address as string, signature: (signature as string | null | undefined) ?? null };
}

export function refundClaimRouter(ctx: DomainContext): Router {
  const template = readFileSync(`${WEB_DIR}refund.html`, 'utf8');
  const router = Router();
  router.use('/r', hostedPageHeaders);

  router.get('/r/:id', async (req, res) => {
    await rateLimit(ctx, ['refund_claims', clientAddressOf(req)]);
    const lang = chooseLanguage(req);
    const claim = await openClaim(ctx, claimId(req)).catch((error) => refuse(res, lang, error));
    if (!claim) return;
    const { refund, network, organisationName, proofTemplate } = claim;
    const branding = await brandingOf(ctx, refund.organisationId);
    const texts = refundCatalogue(lang);
    const amount = `${formatAmount(refund.amount)} ${refund.asset}`;
    const networkText = `${network.name} (chain ${network.chainId})`;
    const pageData = {
      refundId: refund.id,
      lang,
      messages: texts,
      brand: brandColors(branding),
      amount: formatAmount(refund.amount),
      asset: refund.asset,
      network: { slug: network.slug, name: network.name, chainId: network.chainId },
      shop: organisationName,
      claimExpiresAt: refund.claimExpiresAt!.toISOString(),
      proofTemplate,
    };
    const header = branding ?? { organisationName, brandColor: null, logoSha256: null };
    res
      .status(200)
      .type('html')
      .send(
        render(template, texts, lang, {
          'page-data': jsonScript('kassa-page-data', pageData),
          merchant: organisationName || branding ? merchantHeader(header, lang) : '',
          languages: languageSwitch(lang, `/r/${refund.id}`),
          amount: escapeHtml(amount),
          network: escapeHtml(networkText),
          shop: escapeHtml(organisationName),
        }),
      );
  });

  router.post('/r/:id', async (req, res) => {
    await rateLimit(ctx, ['refund_claims', clientAddressOf(req)]);
    const refund = await submitClaim(ctx, claimId(req), readSubmission(req));
    res.status(200).json({
      refund_id: refund.id,
      status: refund.status,
      destination: refund.destination,
      destination_source: refund.destinationSource,
      proof_address: refund.proof?.address ?? null,
    });
  });
  router.all('/r/:id', methodNotAllowed(['GET', 'POST']));

  return router;
}

/** A claim that takes no address: a readable page with the refusal's status; any other error goes to the handler. */
function refuse(res: Response, lang: string, error: unknown): null {
  const refusal = error instanceof DomainError ? REFUSALS[error.reason] : undefined;
  if (!refusal) throw error;
  res.status(refusal[0]).type('html').send(refusalPage(lang, refusal[1]));
  return null;
}
