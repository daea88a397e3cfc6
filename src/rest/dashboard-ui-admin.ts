import type { Request } from 'express';
import { roleIn, type Principal } from '../domain/dashboard/sign-in.js';
import { roleAllows } from '../domain/dashboard/roles.js';
import { frame, input, plainText, textOf, type DashboardLanguage } from './dashboard-ui.js';

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
  return frame(req, lang, principal, { name, title: plainText(lang, `${name}.title`), organisationId }, body);
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
