// What every dashboard page module shares (docs/dashboard.md#the-pages): the page as the server wrote it (texts, CSRF
// token, organisation, permissions), the calls to its APIs, and the DOM builders (no HTML from data).

export const texts = JSON.parse(document.getElementById('texts').textContent);
export const t = (key) => (key in texts ? texts[key] : key);
export const csrf = document.querySelector('meta[name="kassa-csrf"]').content;
export const lang = document.documentElement.lang;
export const org = document.body.dataset.org;
const permissions = (document.body.dataset.permissions || '').split(' ');
export const can = (permission) => permissions.includes(permission);
export const results = document.getElementById('results');

export async function graphql(query, variables) {
  const response = await fetch('/dashboard/graphql', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify({ query, variables }),
  });
  if (response.status === 401) {
    location.assign('/dashboard/sign-in');
    return null;
  }
  const body = await response.json();
  if (body.errors) throw new Error(body.errors.map((e) => e.message).join('; '));
  return body.data;
}

/** The dashboard's JSON routes for links, keys and settings; a refusal's message is thrown. */
export async function api(method, path, body) {
  const response = await fetch('/dashboard/api/organisations/' + encodeURIComponent(org) + path, {
    method,
    headers:
      body === undefined ? { 'X-CSRF-Token': csrf } : { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) {
    location.assign('/dashboard/sign-in');
    return null;
  }
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.message || String(response.status));
  return answer;
}

export function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  for (const child of children)
    if (child !== null && child !== undefined)
      node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  return node;
}

export const when = (iso) => iso.replace('T', ' ').slice(0, 19) + ' UTC';
export const statusText = (status) => t('status.' + status.toLowerCase());

export function showProblem(message) {
  results.replaceChildren(el('p', { class: 'problem', role: 'alert' }, t('error.load') + ' (' + message + ')'));
}

/** A table in a region that scrolls sideways on a narrow screen and can be reached by keyboard to do so. */
export function table(caption, headings, rows) {
  const head = el('tr', {}, ...headings.map((h) => el('th', { scope: 'col' }, h)));
  const body = el('tbody', {}, ...rows.map((cells) => el('tr', {}, ...cells.map((cell) => el('td', {}, cell)))));
  const wrap = el('div', { class: 'scroll', role: 'region', tabindex: '0', 'aria-label': caption });
  wrap.append(el('table', {}, el('caption', {}, caption), el('thead', {}, head), body));
  return wrap;
}

/** A button that runs `action`; a refusal is said in `status`. */
export function actionButton(label, status, action) {
  const button = el('button', { type: 'button', class: 'small' }, label);
  button.addEventListener('click', () => {
    button.disabled = true;
    action()
      .catch((error) => (status.textContent = error.message))
      .finally(() => (button.disabled = false));
  });
  return button;
}
