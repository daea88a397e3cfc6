import { readFileSync } from 'node:fs';
import type { Request } from 'express';
import { ASSET_TICKERS } from '../domain/shared/assets.js';
import { CHECKOUT_SESSION_STATUSES } from '../domain/sessions/checkout-session.js';
import { roleIn, type Principal } from '../domain/dashboard/sign-in.js';
import { PERMISSIONS, roleAllows, type DashboardPermission } from '../domain/dashboard/roles.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/shared/event-types.js';
import { escapeHtml } from './dashboard-pages.js';
import { WEB_DIR } from './hosted-page.js';

/**
 * The dashboard's session pages (docs/dashboard.md#the-pages), in English and German: the server writes frame, filter
 * form and texts; web/dashboard/dashboard.js fills in the data from the merchant GraphQL API.
 */
export const DASHBOARD_LANGUAGES = ['en', 'de'] as const;
export type DashboardLanguage = (typeof DASHBOARD_LANGUAGES)[number];
type Texts = Readonly<Record<string, string>>;

const TEXTS: ReadonlyMap<DashboardLanguage, Texts> = new Map(
  DASHBOARD_LANGUAGES.map((lang) => [
    lang,
    JSON.parse(readFileSync(`${WEB_DIR}dashboard/i18n/${lang}.json`, 'utf8')) as Texts,
  ]),
);
{
  // A text missing in one language would show its key: refuse to start instead.
  const english = Object.keys(TEXTS.get('en')!);
  for (const [lang, texts] of TEXTS) {
    const missing = english.filter((key) => typeof texts[key] !== 'string');
    if (missing.length > 0) throw new Error(`web/dashboard/i18n/${lang}.json lacks ${missing.join(', ')}`);
  }
}

/** `?lang=` when it names one of the languages, else the first of Accept-Language that does, else English. */
export function languageOf(req: Request): DashboardLanguage {
  const asked = typeof req.query.lang === 'string' ? req.query.lang : undefined;
  if (asked && (DASHBOARD_LANGUAGES as readonly string[]).includes(asked)) return asked as DashboardLanguage;
  const accepted = req.acceptsLanguages(...DASHBOARD_LANGUAGES);
  return typeof accepted === 'string' ? (accepted as DashboardLanguage) : 'en';
}

export function textOf(lang: DashboardLanguage): (key: string) => string {
  const texts = TEXTS.get(lang)!;
  return (key) => escapeHtml(texts[key] ?? key);
}

/** The URL with `changes` applied (null removes a parameter). */
function withParams(req: Request, changes: Record<string, string | null>): string {
  const url = new URL(req.originalUrl, 'http://kassa.invalid');
  for (const [name, value] of Object.entries(changes))
    if (value === null) url.searchParams.delete(name);
    else url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

export function frame(
  req: Request,
  lang: DashboardLanguage,
  principal: Principal,
  view: { name: string; title: string; organisationId: string; sessionId?: string },
  body: string,
): string {
  const t = textOf(lang);
  // What the page offers; the server checks every operation again.
  const role = roleIn(principal, view.organisationId);
  const permissions = (Object.keys(PERMISSIONS) as DashboardPermission[]).filter((p) => roleAllows(role, p));
  // JSON in a non-executed script element: `<` escaped so no text can close the element.
  const texts = JSON.stringify(TEXTS.get(lang)).replace(/</g, '\\u003c');
  const switcher = DASHBOARD_LANGUAGES.map((code) =>
    code === lang
      ? `<span aria-current="true">${code.toUpperCase()}</span>`
      : `<a href="${escapeHtml(withParams(req, { lang: code }))}" hreflang="${code}" lang="${code}">` +
        `${code.toUpperCase()}</a>`,
  ).join(' ');
  const sessions = `/dashboard/sessions?org=${view.organisationId}&lang=${lang}`;
  const webhooks = `/dashboard/webhooks?org=${view.organisationId}&lang=${lang}`;
  const navLink = (name: string) =>
    `<a href="${escapeHtml(`/dashboard/${name}?org=${view.organisationId}&lang=${lang}`)}"` +
    `${view.name === name ? ' aria-current="page"' : ''}>${t(`nav.${name}`)}</a>`;
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<meta name="kassa-csrf" content="${escapeHtml(principal.csrfToken)}">
<title>${escapeHtml(view.title)} · Kassa</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
</head>
<body data-view="${view.name}" data-org="${escapeHtml(view.organisationId)}"
 data-session="${escapeHtml(view.sessionId ?? '')}" data-permissions="${permissions.join(' ')}">
<header class="bar">
<nav aria-label="Kassa">
<a href="/dashboard">${t('nav.home')}</a>
<a href="${escapeHtml(sessions)}">${t('nav.sessions')}</a>
<a href="${escapeHtml(webhooks)}">${t('nav.webhooks')}</a>
${navLink('links')}
${navLink('keys')}
${navLink('settings')}
${navLink('deposits')}
</nav>
<p class="languages"><span>${t('language.switch')}:</span> ${switcher}</p>
<form class="inline" method="post" action="/dashboard/sign-out">
<input type="hidden" name="csrf_token" value="${escapeHtml(principal.csrfToken)}">
<button type="submit" class="link">${t('nav.signOut')}</button>
</form>
</header>
<main>
<h1>${escapeHtml(view.title)}</h1>
${body}
</main>
<script type="application/json" id="texts">${texts}</script>
<script src="/dashboard/assets/dashboard.js"></script>
${view.name === 'settings' ? '<script src="/dashboard/assets/logo.js"></script>' : ''}
</body>
</html>
`;
}

function select(name: string, label: string, any: string, options: Array<[string, string]>, chosen: string[]) {
  const items = options
    .map(([value, text]) => `<option value="${value}"${chosen.includes(value) ? ' selected' : ''}>${text}</option>`)
    .join('');
  return `<div class="field"><label for="f-${name}">${label}</label>
<select id="f-${name}" name="${name}"><option value="">${any}</option>${items}</select></div>`;
}

function input(name: string, label: string, type: string, value: string | undefined, extra = '') {
  return `<div class="field"><label for="f-${name}">${label}</label>
<input id="f-${name}" name="${name}" type="${type}" value="${escapeHtml(value ?? '')}"${extra}></div>`;
}

/** The sessions list: the filter form as the URL has it, the export link, and the table dashboard.js fills. */
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
    { name: 'sessions', title: TEXTS.get(lang)!['sessions.title']!, organisationId },
    body,
  );
}

/** One session: dashboard.js fills in its details, items, quotes and timeline. */
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
  const title = `${TEXTS.get(lang)!['session.title']} ${sessionId.slice(0, 8)}`;
  return frame(req, lang, principal, { name: 'session', title, organisationId, sessionId }, body);
}

/**
 * The organisation's webhook endpoints with their latest deliveries; the actions (redeliver, add, disable, rotate)
 * are offered to the roles that may take them (the server checks again). dashboard.js fills in the data.
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
  const title = TEXTS.get(lang)!['webhooks.title']!;
  return frame(req, lang, principal, { name: 'webhooks', title, organisationId }, body);
}

/** A page of the organisation's links, keys or settings: the server writes the forms the role may use. */
function adminPage(
  req: Request,
  lang: DashboardLanguage,
  principal: Principal,
  organisationId: string,
  name: 'links' | 'keys' | 'settings',
  form: string,
): string {
  const t = textOf(lang);
  const body = `<p>${t(`${name}.intro`)}</p>
${form}
<div id="results" aria-live="polite"><p>${t('sessions.loading')}</p></div>`;
  return frame(req, lang, principal, { name, title: TEXTS.get(lang)![`${name}.title`]!, organisationId }, body);
}

/** Payment links: the list with uses and QR codes, and for admins the form that creates one. */
export function linksPage(req: Request, lang: DashboardLanguage, principal: Principal, organisationId: string) {
  const t = textOf(lang);
  const form = roleAllows(roleIn(principal, organisationId), 'manage_links')
    ? `<form id="create-link" class="filters" aria-labelledby="create-link-title">
<h2 id="create-link-title">${t('links.create')}</h2>
<div class="grid">
${input('link-name', t('links.name'), 'text', undefined, ' required maxlength="200"')}
${input('link-currency', t('filter.currency'), 'text', 'USD', ' required maxlength="3" autocapitalize="characters"')}
${input('link-price', t('links.price'), 'text', undefined, ' inputmode="decimal"')}
${input('link-min', t('links.min'), 'text', undefined, ' inputmode="decimal"')}
${input('link-max', t('links.max'), 'text', undefined, ' inputmode="decimal"')}
${input('link-uses', t('links.maxUses'), 'number', undefined, ' min="1"')}
</div>
<p class="note">${t('links.priceOrRange')}</p>
<button type="submit">${t('links.createButton')}</button>
<div id="link-status" role="status"></div>
</form>`
    : '';
  return adminPage(req, lang, principal, organisationId, 'links', form);
}

/** API keys: the list with last use, and for developers "create" (the secret shown once). */
export function keysPage(req: Request, lang: DashboardLanguage, principal: Principal, organisationId: string) {
  const t = textOf(lang);
  const form = roleAllows(roleIn(principal, organisationId), 'manage_keys')
    ? `<form id="create-key" aria-label="${t('keys.create')}">
<button type="submit">${t('keys.create')}</button>
<div id="key-status" role="status"></div>
</form>`
    : '';
  return adminPage(req, lang, principal, organisationId, 'keys', form);
}

/** Settings: branding and the payment policy; the fields are read-only below admin. */
export function settingsPage(req: Request, lang: DashboardLanguage, principal: Principal, organisationId: string) {
  const t = textOf(lang);
  const editable = roleAllows(roleIn(principal, organisationId), 'manage_settings');
  const off = editable ? '' : ' readonly';
  const form = `<form id="settings" class="filters" aria-labelledby="settings-title">
<h2 id="settings-title">${t('settings.form')}</h2>
<div class="grid">
${input('brand_color', t('settings.brandColor'), 'text', undefined, ` placeholder="#1d4ed8" maxlength="7"${off}`)}
${input('underpayment_tolerance_percent', t('settings.tolerance'), 'text', undefined, ` inputmode="decimal"${off}`)}
${input('late_payment_window_minutes', t('settings.lateWindow'), 'number', undefined, ` min="0"${off}`)}
</div>
${editable ? `<button type="submit">${t('settings.save')}</button>` : `<p class="note">${t('settings.readOnly')}</p>`}
<div id="settings-status" role="status"></div>
</form>
<section class="filters" aria-labelledby="logo-title">
<h2 id="logo-title">${t('logo.title')}</h2>
<div id="logo-current"></div>
${
  editable
    ? `<form id="logo-form">
<div class="field"><label for="logo-file">${t('logo.file')}</label>
<input id="logo-file" name="logo" type="file" accept="image/png,image/webp" required></div>
<button type="submit">${t('logo.upload')}</button>
<button type="button" id="logo-remove" hidden>${t('logo.remove')}</button>
</form>`
    : `<p class="note">${t('settings.readOnly')}</p>`
}
<div id="logo-status" role="status"></div>
</section>`;
  return adminPage(req, lang, principal, organisationId, 'settings', form);
}
