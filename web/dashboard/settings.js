// The settings page (docs/dashboard.md#links-keys-and-settings): the organisation's settings in their form, saved
// with PATCH (the logo has web/dashboard/logo.js).
import { api, el, results, t } from './page-context.js';

export async function showSettings() {
  const settings = await api('GET', '/settings');
  if (!settings) return;
  const form = document.getElementById('settings');
  const status = document.getElementById('settings-status');
  const fields = ['brand_color', 'underpayment_tolerance_percent', 'late_payment_window_minutes'];
  for (const name of fields) form.elements[name].value = settings[name] === null ? '' : String(settings[name]);
  results.replaceChildren();
  if (form.dataset.bound) return;
  form.dataset.bound = 'true';
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const body = {};
    for (const name of fields) body[name] = form.elements[name].value.trim();
    api('PATCH', '/settings', body)
      .then((saved) => saved && (status.textContent = t('settings.saved')))
      .catch((error) => status.replaceChildren(el('p', { class: 'problem' }, error.message)));
  });
}
