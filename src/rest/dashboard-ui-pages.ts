import type { Request } from 'express';
import { ASSET_TICKERS } from '../domain/shared/assets.js';
import { CHECKOUT_SESSION_STATUSES } from '../domain/sessions/checkout-session.js';
import { roleIn, type Principal } from '../domain/dashboard/sign-in.js';
import { roleAllows } from '../domain/dashboard/roles.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/shared/event-types.js';
import { escapeHtml } from './dashboard-pages.js';
import { frame, input, plainText, select, textOf, withParams, type DashboardLanguage } from './dashboard-ui.js';

/** The sessions list: the filter form as the URL has it, the export link, and the table the page module fills. */
export function sessionsPage(
  req: Request,
  lang: DashboardLanguage,
  principal: Principal,
  organisationId: string,
  networks: readonly string[],
): string {
  const t = textOf(lang);
  const q = (name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : undefined);
  const statuses = ([] as unknown[]).concat(req.query.status ?? []).filter((s): s is string => typeof s === 'string');
  const form = `<form class="filters" method="get" action="/dashboard/sessions" aria-labelledby="filters-title">
<h2 id="filters-title">${t('sessions.filters')}</h2>
<input type="hidden" name="org" value="${escapeHtml(organisationId)}">
<input type="hidden" name="lang" value="${lang}">
<div class="grid">
${select(
  'status',
  t('filter.status'),
  t('filter.anyStatus'),
  CHECKOUT_SESSION_STATUSES.map((s) => [s, t(`status.${s}`)]),
  statuses,
)}
${select(
  'asset',
  t('filter.asset'),
  t('filter.anyAsset'),
  ASSET_TICKERS.map((a) => [a, a]),
  [q('asset') ?? ''],
)}
${select(
  'network',
  t('filter.network'),
  t('filter.anyNetwork'),
  networks.map((n) => [n, n]),
  [q('network') ?? ''],
)}
${input('from', t('filter.from'), 'date', q('from'))}
${input('to', t('filter.to'), 'date', q('to'))}
${input('currency', t('filter.currency'), 'text', q('currency'), ' maxlength="3" autocapitalize="characters"')}
${input('min', t('filter.min'), 'text', q('min'), ' inputmode="decimal"')}
${input('max', t('filter.max'), 'text', q('max'), ' inputmode="decimal"')}
${input('payer', t('filter.payer'), 'text', q('payer'))}
${input('tx', t('filter.tx'), 'text', q('tx'), ' spellcheck="false"')}
${input('link', t('filter.link'), 'text', q('link'), ' spellcheck="false"')}
${input('wallet', t('filter.wallet'), 'text', q('wallet'), ' spellcheck="false"')}
${input('meta', t('filter.meta'), 'text', q('meta'), ' spellcheck="false"')}
</div>
<button type="submit">${t('filter.apply')}</button>
<a href="/dashboard/sessions?org=${escapeHtml(organisationId)}&amp;lang=${lang}">${t('filter.clear')}</a>
</form>`;
  const csv = withParams(req, { after: null, lang: null }).replace(
    /^\/dashboard\/sessions/,
    `/dashboard/api/organisations/${organisationId}/sessions.csv`,
  );
  const paymentsCsv = csv.replace(/\/sessions\.csv/, '/payments.csv');
  const body = `${form}
<p class="exports"><a id="export" href="${escapeHtml(csv)}" download>${t('sessions.export')}</a>
<a id="export-payments" href="${escapeHtml(paymentsCsv)}" download>${t('sessions.exportPayments')}</a></p>
<div id="results" aria-live="polite"><p>${t('sessions.loading')}</p></div>`;
  return frame(
    req,
    lang,
    principal,
    { name: 'sessions', title: plainText(lang, 'sessions.title'), organisationId },
    body,
  );
}

/** One session: the page module fills in its details, items, quotes and timeline. */
export function sessionPage(
  req: Request,
  lang: DashboardLanguage,
  principal: Principal,
  organisationId: string,
  sessionId: string,
): string {
  const t = textOf(lang);
  const back = `/dashboard/sessions?org=${encodeURIComponent(organisationId)}&lang=${lang}`;
  const body = `<p><a href="${escapeHtml(back)}">${t('session.back')}</a></p>
<div id="results" aria-live="polite"><p>${t('sessions.loading')}</p></div>`;
  const title = `${plainText(lang, 'session.title')} ${sessionId.slice(0, 8)}`;
  return frame(req, lang, principal, { name: 'session', title, organisationId, sessionId }, body);
}

/**
 * The organisation's webhook endpoints with their latest deliveries; the actions (redeliver, add, disable, rotate)
 * are offered to the roles that may take them (the server checks again); the page module fills in the data.
 */
export function webhooksPage(
  req: Request,
  lang: DashboardLanguage,
  principal: Principal,
  organisationId: string,
): string {
  const t = textOf(lang);
  const events = WEBHOOK_EVENT_TYPES.map(
    (type) => `<label class="check"><input type="checkbox" name="events" value="${type}"> ${type}</label>`,
  ).join('\n');
  const add = roleAllows(roleIn(principal, organisationId), 'manage_webhooks')
    ? `<form id="add-endpoint" class="filters" aria-labelledby="add-endpoint-title">
<h2 id="add-endpoint-title">${t('webhooks.add')}</h2>
<div class="field"><label for="endpoint-url">${t('webhooks.url')}</label>
<input id="endpoint-url" name="url" type="url" required spellcheck="false"></div>
<fieldset><legend>${t('webhooks.events')} (${t('webhooks.noneMeansAll')})</legend>
${events}
</fieldset>
<button type="submit">${t('webhooks.addButton')}</button>
<div id="endpoint-secret" role="status"></div>
</form>`
    : '';
  const body = `<p>${t('webhooks.intro')}</p>
${add}
<div id="results" aria-live="polite"><p>${t('sessions.loading')}</p></div>`;
  const title = plainText(lang, 'webhooks.title');
  return frame(req, lang, principal, { name: 'webhooks', title, organisationId }, body);
}
