import { readFileSync } from 'node:fs';
import type { Request } from 'express';
import { roleIn, type Principal } from '../domain/dashboard/sign-in.js';
import { PERMISSIONS, roleAllows, type DashboardPermission } from '../domain/dashboard/roles.js';
import { escapeHtml } from './dashboard-pages.js';
import { WEB_DIR } from './hosted-page.js';

/**
 * The dashboard's pages (docs/dashboard.md#the-pages), in English and German: the server writes frame, forms and texts
 * (pages in dashboard-ui-pages.ts, dashboard-ui-admin.ts); web/dashboard/views.js's page modules fill in the data.
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

/** The text `key` in `lang` as written (not escaped: for a page's title, which frame escapes). */
export const plainText = (lang: DashboardLanguage, key: string): string => TEXTS.get(lang)![key]!;

/** The URL with `changes` applied (null removes a parameter). */
export function withParams(req: Request, changes: Record<string, string | null>): string {
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
<script type="module" src="/dashboard/assets/views.js"></script>
${view.name === 'settings' ? '<script src="/dashboard/assets/logo.js"></script>' : ''}
</body>
</html>
`;
}
export function select(name: string, label: string, any: string, options: Array<[string, string]>, chosen: string[]) {
  const items = options
    .map(([value, text]) => `<option value="${value}"${chosen.includes(value) ? ' selected' : ''}>${text}</option>`)
    .join('');
  return `<div class="field"><label for="f-${name}">${label}</label>
<select id="f-${name}" name="${name}"><option value="">${any}</option>${items}</select></div>`;
}
export function input(name: string, label: string, type: string, value: string | undefined, extra = '') {
  return `<div class="field"><label for="f-${name}">${label}</label>
<input id="f-${name}" name="${name}" type="${type}" value="${escapeHtml(value ?? '')}"${extra}></div>`;
}
