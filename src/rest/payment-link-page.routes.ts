import { readFileSync } from 'node:fs';
import { Router } from 'express';
import type { DomainContext } from '../domain/context.js';
import { brandingOf } from '../domain/organisations/branding.js';
import { DomainError } from '../domain/shared/errors.js';
import { paymentLinkState, type PaymentLink, type PaymentLinkState } from '../domain/payment-links/payment-link.js';
import { toPayerLinkView } from '../domain/payment-links/payment-link.views.js';
import { findPaymentLink } from '../domain/payment-links/payment-links.js';
import { methodNotAllowed } from '../http/error-handler.js';
import {
  brandColors,
  catalogue,
  chooseLanguage,
  escapeHtml,
  format,
  hostedPageHeaders,
  jsonScript,
  languageSwitch,
  merchantHeader,
  messagePage,
  renderTemplate,
  WEB_DIR,
} from './hosted-page.js';

const UNAVAILABLE: Record<Exclude<PaymentLinkState, 'active'>, [number, string, string]> = {
  inactive: [410, 'message.inactiveTitle', 'message.inactiveText'],
  expired: [410, 'message.expiredTitle', 'message.expiredText'],
  used_up: [409, 'message.usedUpTitle', 'message.usedUpText'],
};

/** The payment link page `{checkout_base_url}/l/<id>` (docs/hosted-pages.md#payment-links). */
export function paymentLinkPageRouter(ctx: DomainContext): Router {
  const template = readFileSync(`${WEB_DIR}link.html`, 'utf8');
  const router = Router();
  router.use('/l', hostedPageHeaders);

  router.get('/l/:id', async (req, res) => {
    const lang = chooseLanguage(req);
    let link: PaymentLink;
    try {
      link = await findPaymentLink(ctx, req.params.id);
    } catch (error) {
      if (!(error instanceof DomainError) || (error.code !== 'invalid' && error.code !== 'not_found')) throw error;
      const [status, title, text] =
        error.code === 'invalid'
          ? [400, 'message.badLinkTitle', 'message.badLinkText']
          : [404, 'message.noLinkTitle', 'message.noLinkText'];
      res
        .status(status)
        .type('html')
        .send(messagePage(lang, title, text));
      return;
    }
    const branding = await brandingOf(ctx, link.organisationId);
    const state = paymentLinkState(link, ctx.clock());
    if (state !== 'active') {
      const [status, title, text] = UNAVAILABLE[state];
      res
        .status(status)
        .type('html')
        .send(messagePage(lang, title, text, branding));
      return;
    }
    const pageData = { link: toPayerLinkView(link), lang, messages: catalogue(lang), brand: brandColors(branding) };
    res
      .status(200)
      .type('html')
      .send(
        renderTemplate(template, lang, {
          'page-data': jsonScript('kassa-page-data', pageData),
          title: escapeHtml(format(catalogue(lang)['link.documentTitle']!, { name: link.name })),
          name: escapeHtml(link.name),
          merchant: merchantHeader(branding, lang),
          languages: languageSwitch(lang, `/l/${link.id}`),
        }),
      );
  });
  router.all('/l/:id', methodNotAllowed(['GET']));
  return router;
}
