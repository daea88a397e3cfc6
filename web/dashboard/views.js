// The dashboard's views (docs/dashboard.md#the-pages): filters from the URL, data from /dashboard/graphql, tables built
// with DOM calls; the server wrote the frame and texts. Fills in the page's view and follows live updates.
import { org, showProblem } from './page-context.js';
import { showApiKeysPage } from './api-keys.js';
import { showLinksPage } from './payment-links.js';
import { showSession, showSessions } from './sessions.js';
import { showSettings } from './settings.js';
import { showWebhooksPage } from './webhooks.js';

const VIEWS = {
  links: showLinksPage,
  keys: showApiKeysPage,
  settings: showSettings,
  deposits: () => import('/dashboard/assets/deposits.js').then((page) => page.show()),
  session: showSession,
  webhooks: showWebhooksPage,
};
const name = document.body.dataset.view;
const view = VIEWS[name] || showSessions;
view().catch((error) => showProblem(error.message));

/**
 * Live updates (docs/dashboard.md#live-updates): the server names the organisation's sessions that changed; the
 * list's first page and an open session are read again (a later page stays as it is, so keyset pages hold).
 */
function live(refresh, wanted) {
  const source = new EventSource('/dashboard/api/organisations/' + encodeURIComponent(org) + '/live');
  let again = null;
  const later = () => {
    again ??= setTimeout(() => {
      again = null;
      refresh()
        .then(() => (document.body.dataset.updated = new Date().toISOString()))
        .catch((error) => showProblem(error.message));
    }, 100);
  };
  source.addEventListener('sessions', (event) => wanted(JSON.parse(event.data)) && later());
  source.addEventListener('reset', later);
  addEventListener('pagehide', () => source.close());
}
if (name === 'sessions' && !new URLSearchParams(location.search).get('after')) live(showSessions, () => true);
if (name === 'session') live(showSession, (ids) => ids.includes(document.body.dataset.session));
