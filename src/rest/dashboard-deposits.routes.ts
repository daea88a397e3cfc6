import { readFileSync } from 'node:fs';
import { Router, type Request, type Response } from 'express';
import type { DomainContext } from '../domain/context.js';
import { DomainError } from '../domain/shared/errors.js';
import { requirePermission, roleAllows } from '../domain/dashboard/roles.js';
import { roleIn } from '../domain/dashboard/sign-in.js';
import { principalOf, type DashboardCookieOptions } from '../http/dashboard-session.js';
import { DASHBOARD_CSP, escapeHtml } from './dashboard-pages.js';
import { DASHBOARD_LANGUAGES, frame, languageOf, type DashboardLanguage } from './dashboard-ui.js';
import { WEB_DIR } from './hosted-page.js';

/**
 * The deposits page (docs/dashboard.md#deposits-and-collecting): the server writes the frame and the mode form the
 * role may use; web/dashboard/deposits.js reads balances, builds collects and has the browser wallet send them.
 */

type Texts = Readonly<Record<string, string>>;

const TEXTS: ReadonlyMap<DashboardLanguage, Texts> = new Map(
  DASHBOARD_LANGUAGES.map((lang) => [
    lang,
    JSON.parse(readFileSync(`${WEB_DIR}dashboard/i18n/deposits.${lang}.json`, 'utf8')) as Texts,
  ]),
);
{
  const english = Object.keys(TEXTS.get('en')!);
  for (const [lang, texts] of TEXTS) {
    const missing = english.filter((key) => typeof texts[key] !== 'string');
    if (missing.length > 0) throw new Error(`web/dashboard/i18n/deposits.${lang}.json lacks ${missing.join(', ')}`);
  }
}

function depositsPage(req: Request, lang: DashboardLanguage, principal: Parameters<typeof frame>[2], org: string) {
  const texts = TEXTS.get(lang)!;
  const t = (key: string) => escapeHtml(texts[key] ?? key);
  const owner = roleAllows(roleIn(principal, org), 'manage_wallet');
  const choice = (mode: string) =>
    `<label class="check"><input type="radio" name="mode" value="${mode}"${owner ? '' : ' disabled'}> ` +
    `${t(`mode.${mode}`)}</label>`;
  const body = `<p>${t('deposits.intro')}</p>
<form id="receiving-mode" class="filters" aria-labelledby="mode-title">
<h2 id="mode-title">${t('mode.title')}</h2>
<fieldset><legend>${t('mode.legend')}</legend>
${choice('deposit_addresses')}
${choice('shared_wallet')}
</fieldset>
<p class="note">${t('mode.note')}</p>
${owner ? `<button type="submit">${t('mode.save')}</button>` : `<p class="note">${t('mode.ownerOnly')}</p>`}
<div id="mode-status" role="status"></div>
</form>
<h2>${t('waiting.title')}</h2>
<div id="results" aria-live="polite"></div>
<div id="wallet-status" role="status"></div>
<div id="collects" aria-live="polite"></div>
<script type="application/json" id="deposit-texts">${JSON.stringify(texts).replace(/</g, '\\u003c')}</script>`;
  return frame(req, lang, principal, { name: 'deposits', title: texts['deposits.title']!, organisationId: org }, body);
}

export function dashboardDepositsRouter(ctx: DomainContext, options: DashboardCookieOptions): Router {
  const router = Router();
  router.get('/dashboard/assets/deposits.js', (_req, res) => {
    res.type('text/javascript').set('Cache-Control', 'no-cache').sendFile(`${WEB_DIR}dashboard/deposits.js`);
  });
  router.get('/dashboard/deposits', async (req: Request, res: Response) => {
    let principal;
    try {
      principal = await principalOf(ctx, req, options);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthorised') return res.redirect(303, '/dashboard/sign-in');
      throw error;
    }
    const org = typeof req.query.org === 'string' ? req.query.org : principal.memberships[0]?.organisationId;
    if (!org) throw new DomainError('not_found', 'You belong to no organisation');
    requirePermission(roleIn(principal, org), 'read');
    res
      .status(200)
      .set({ 'Content-Security-Policy': DASHBOARD_CSP, 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'same-origin' })
      .type('html')
      .send(depositsPage(req, languageOf(req), principal, org));
  });
  return router;
}
