// The payment links page (docs/dashboard.md#links-keys-and-settings): the links with their QR codes, and for roles
// with manage_links the "Create" form and each link's actions.
import { actionButton, api, can, el, org, results, t, table } from './page-context.js';

const decimal = (text) => Number(String(text).trim());

async function showLinks() {
  const answer = await api('GET', '/payment-links');
  if (!answer) return;
  if (answer.data.length === 0) {
    results.replaceChildren(el('p', {}, t('links.none')));
    return;
  }
  const manage = can('manage_links');
  const rows = answer.data.map((link) => {
    const status = el('span', { class: 'note', role: 'status' });
    const short = (amount) => amount.replace(/\.?0+$/, '');
    const amount = link.total_amount_fiat
      ? short(link.total_amount_fiat) + ' ' + link.currency
      : short(link.amount_fiat.min) + '–' + short(link.amount_fiat.max) + ' ' + link.currency;
    const qr = el('img', {
      src:
        '/dashboard/api/organisations/' +
        encodeURIComponent(org) +
        '/payment-links/' +
        link.payment_link_id +
        '/qr.svg',
      alt: t('links.qrOf') + ' ' + link.name,
      width: '96',
      height: '96',
    });
    const cells = [
      link.name,
      t('state.' + link.state),
      amount,
      link.max_uses === null ? String(link.uses) : link.uses + ' / ' + link.max_uses,
      el('a', { href: link.url }, link.url),
      qr,
    ];
    if (manage) {
      const patch = (body) => api('PATCH', '/payment-links/' + link.payment_link_id, body).then(() => showLinks());
      const toggle = actionButton(t(link.active ? 'links.deactivate' : 'links.activate'), status, () =>
        patch({ active: !link.active }),
      );
      const nameId = 'edit-name-' + link.payment_link_id;
      const usesId = 'edit-uses-' + link.payment_link_id;
      const name = el('input', { id: nameId, name: 'name', type: 'text', value: link.name, maxlength: '200' });
      const uses = el('input', {
        id: usesId,
        name: 'max_uses',
        type: 'number',
        min: '1',
        value: link.max_uses ?? '',
      });
      const edit = el(
        'form',
        { class: 'edit' },
        el('label', { for: nameId }, t('links.name')),
        name,
        el('label', { for: usesId }, t('links.maxUses')),
        uses,
        el('button', { type: 'submit', class: 'small' }, t('links.save')),
      );
      edit.addEventListener('submit', (event) => {
        event.preventDefault();
        const maxUses = uses.value.trim() === '' ? null : Number(uses.value);
        patch({ name: name.value, max_uses: maxUses }).catch((error) => (status.textContent = error.message));
      });
      cells.push(el('span', {}, toggle, el('details', {}, el('summary', {}, t('links.edit')), edit), status));
    }
    return cells;
  });
  const headings = ['links.name', 'links.state', 'links.amount', 'links.uses', 'links.url', 'links.qr'];
  if (manage) headings.push('links.actions');
  results.replaceChildren(table(t('links.caption'), headings.map(t), rows));
}

function createLinkForm() {
  const form = document.getElementById('create-link');
  if (!form) return;
  const status = document.getElementById('link-status');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = (id) => document.getElementById(id).value.trim();
    const body = { name: value('f-link-name'), currency: value('f-link-currency') };
    if (value('f-link-price'))
      body.items = [{ name: body.name, quantity: 1, unit_price: decimal(value('f-link-price')) }];
    if (value('f-link-min') || value('f-link-max'))
      body.amount_fiat = { min: decimal(value('f-link-min')), max: decimal(value('f-link-max')) };
    if (value('f-link-uses')) body.max_uses = Number(value('f-link-uses'));
    api('POST', '/payment-links', body)
      .then((link) => {
        if (!link) return;
        form.reset();
        return showLinks().then(() =>
          status.replaceChildren(t('links.created') + ' ', el('a', { href: link.url }, link.url)),
        );
      })
      .catch((error) => status.replaceChildren(el('p', { class: 'problem' }, error.message)));
  });
}

/** The payment links view: the "Create" form, then the links. */
export function showLinksPage() {
  createLinkForm();
  return showLinks();
}
