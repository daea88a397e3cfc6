import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Request, RequestHandler } from 'express';
import { logoPath, textColorOn } from '../domain/organisations/branding.js';
import type { Branding } from '../domain/organisations/branding-ports.js';

/**
 * What /pay and /l share: text catalogues (web/i18n/<lang>.json), language choice, the merchant's header, strict
 * headers. `{{key}}` placeholders are filled on the server, so even the no-JavaScript notice is translated.
 */

// web/ sits beside src/ and dist/, so the same path works from tsc output and from vitest.
export const WEB_DIR = fileURLToPath(new URL('../../web/', import.meta.url));

/**
 * The pages load nothing from elsewhere and run no inline code. `connect-src 'self'` covers the page's own WebSocket
 * too (CSP Level 3 matches ws: and wss: to the page's host); a bare `ws: wss:` would allow any host.
 */
export const HOSTED_PAGE_CSP =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; " +
  "frame-ancestors 'none'";

/**
 * The pages' ES modules, served as written; each page preloads every module it needs, so the browser fetches them in
 * one round trip (docs/hosted-pages.md#the-page-scripts).
 */
export const PAGE_SCRIPTS: readonly string[] = [
  'pay.js',
  'link.js',
  'page.js',
  'checkout-view.js',
  'checkout-live.js',
  'wallet.js',
  'link-amount.js',
  'refund.js',
];

export type Catalogue = Readonly<Record<string, string>>;

export const DEFAULT_LANGUAGE = 'en';
const CATALOGUES: ReadonlyMap<string, Catalogue> = loadCatalogues();
/** The languages the pages speak, English first. */
export const LANGUAGES: readonly string[] = [
  DEFAULT_LANGUAGE,
  ...[...CATALOGUES.keys()].filter((lang) => lang !== DEFAULT_LANGUAGE).sort(),
];

function loadCatalogues(): Map<string, Catalogue> {
  const catalogues = new Map<string, Catalogue>();
  for (const file of readdirSync(`${WEB_DIR}i18n`)
    .filter((name) => /^[a-z]{2}\.json$/.test(name))
    .sort()) {
    catalogues.set(file.slice(0, 2), JSON.parse(readFileSync(`${WEB_DIR}i18n/${file}`, 'utf8')) as Catalogue);
  }
  const english = catalogues.get(DEFAULT_LANGUAGE);
  if (!english) throw new Error('web/i18n/en.json is missing');
  // A text missing in one language would show a key to a payer: refuse to start instead.
  for (const [lang, catalogue] of catalogues) {
    const missing = Object.keys(english).filter((key) => typeof catalogue[key] !== 'string');
    if (missing.length > 0) throw new Error(`web/i18n/${lang}.json lacks ${missing.join(', ')}`);
  }
  return catalogues;
}

export function catalogue(lang: string): Catalogue {
  return CATALOGUES.get(lang) ?? CATALOGUES.get(DEFAULT_LANGUAGE)!;
}

/**
 * The page's language: `?lang=` when it names one we have (the switch on the page), else
 * the best of Accept-Language (by q-value, `de-AT` matching `de`), else English.
 */
export function chooseLanguage(req: Request): string {
  const asked = typeof req.query.lang === 'string' ? req.query.lang.toLowerCase() : null;
  if (asked && CATALOGUES.has(asked)) return asked;
  const header = req.get('accept-language') ?? '';
  const ranked = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
      return { lang: tag.trim().toLowerCase().split('-')[0]!, q: q ? Number(q[1]) : 1, index };
    })
    .filter((entry) => entry.lang && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return ranked.find((entry) => CATALOGUES.has(entry.lang))?.lang ?? DEFAULT_LANGUAGE;
}

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  );
}

/** `{name}` placeholders of a catalogue text, filled with `params`. */
export function format(text: string, params: Readonly<Record<string, string | number>> = {}): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/**
 * Fills a template: `{{key}}` with the catalogue's text (HTML-escaped), `{{lang}}` with the
 * language, `<!--kassa:NAME-->` slots with the given HTML. An unknown key is a bug: it throws.
 */
export function renderTemplate(template: string, lang: string, slots: Readonly<Record<string, string>> = {}): string {
  const texts = catalogue(lang);
  return template
    .replace(/\{\{([\w.]+)\}\}/g, (_whole, key: string) => {
      if (key === 'lang') return lang;
      const text = texts[key];
      if (text === undefined) throw new Error(`no text "${key}" in web/i18n/${lang}.json`);
      return escapeHtml(text);
    })
    .replace(/<!--kassa:([\w-]+)-->/g, (whole, name: string) => slots[name] ?? whole);
}

/** Links to the page in every language, the current one marked; works without JavaScript. */
export function languageSwitch(lang: string, path: string): string {
  const links = LANGUAGES.map((code) => {
    const name = escapeHtml(catalogue(code)['language.name']!);
    return code === lang
      ? `<a href="${escapeHtml(path)}?lang=${code}" lang="${code}" hreflang="${code}" aria-current="true">${name}</a>`
      : `<a href="${escapeHtml(path)}?lang=${code}" lang="${code}" hreflang="${code}">${name}</a>`;
  });
  return (
    `<nav class="languages" ` +
    `aria-label="${escapeHtml(catalogue(lang)['language.switch']!)}">${links.join('')}</nav>`
  );
}

/** The merchant at the top of the page: logo (served by Kassa) and name. */
export function merchantHeader(branding: Branding | null, lang: string): string {
  if (!branding) return '';
  const logo = branding.logoSha256
    ? `<img class="merchant-logo" src="${logoPath(branding.logoSha256)}" alt="" width="40" height="40">`
    : '';
  return (
    `<div class="merchant" aria-label="${escapeHtml(catalogue(lang)['merchant.label']!)}">${logo}<span ` +
    `class="merchant-name">${escapeHtml(branding.organisationName)}</span></div>`
  );
}

/** The brand colour and the text colour readable on it, for the page script to apply (CSP forbids inline styles). */
export function brandColors(branding: Branding | null): { color: string; ink: string } | null {
  return branding?.brandColor ? { color: branding.brandColor, ink: textColorOn(branding.brandColor) } : null;
}

/** JSON inside a non-executed script element: `<` is escaped so no value can close the element. */
export function jsonScript(id: string, data: unknown): string {
  return `<script type="application/json" id="${id}">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>`;
}

export const hostedPageHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'Content-Security-Policy': HOSTED_PAGE_CSP,
    'X-Content-Type-Options': 'nosniff',
    // Session and link ids are in the URL: never hand them to another site.
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  });
  next();
};

/** A short page a payer can read, for a status that is not the page itself (400, 404, 409, 410). */
export function messagePage(lang: string, titleKey: string, textKey: string, branding: Branding | null = null): string {
  const texts = catalogue(lang);
  const title = escapeHtml(texts[titleKey]!);
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
<main class="card message-page">
${merchantHeader(branding, lang)}
<h1>${title}</h1>
<p>${escapeHtml(texts[textKey]!)}</p>
</main>
</body>
</html>
`;
}
