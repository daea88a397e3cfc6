// The API keys page (docs/dashboard.md#links-keys-and-settings): the keys, and for roles with manage_keys a new key
// (its secret shown once) and "Revoke".
import { actionButton, api, can, el, results, t, table, when } from './page-context.js';

async function showKeys() {
  const answer = await api('GET', '/api-keys');
  if (!answer) return;
  if (answer.data.length === 0) {
    results.replaceChildren(el('p', {}, t('keys.none')));
    return;
  }
  const manage = can('manage_keys');
  const rows = answer.data.map((key) => {
    const status = el('span', { class: 'note', role: 'status' });
    const cells = [
      el('code', {}, key.api_key),
      t('keys.' + key.state),
      when(key.created_at),
      key.last_used_at ? when(key.last_used_at) : t('keys.never'),
    ];
    if (manage)
      cells.push(
        key.state === 'active'
          ? el(
              'span',
              {},
              actionButton(t('keys.revoke'), status, () =>
                api('POST', '/api-keys/' + key.id + '/revoke').then(() => showKeys()),
              ),
              status,
            )
          : '–',
      );
    return cells;
  });
  const headings = ['keys.key', 'keys.state', 'keys.created', 'keys.lastUsed'];
  if (manage) headings.push('keys.actions');
  results.replaceChildren(table(t('keys.caption'), headings.map(t), rows));
}

function createKeyForm() {
  const form = document.getElementById('create-key');
  if (!form) return;
  const status = document.getElementById('key-status');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    api('POST', '/api-keys')
      .then((issued) => {
        if (!issued) return;
        return showKeys().then(() =>
          status.replaceChildren(
            el(
              'p',
              { class: 'secret' },
              t('keys.secretOnce') + ' ',
              el('code', {}, issued.api_key),
              ' ',
              el('code', {}, issued.api_secret),
            ),
          ),
        );
      })
      .catch((error) => status.replaceChildren(el('p', { class: 'problem' }, error.message)));
  });
}

/** The API keys view: the "Create" form, then the keys. */
export function showApiKeysPage() {
  createKeyForm();
  return showKeys();
}
