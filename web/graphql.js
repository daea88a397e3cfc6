// @ts-check
// GraphQL over HTTP for the checkout page. Each document goes by its id (a trusted document the server knows):
// queries as GET, the query string about 100 bytes and answered from the server's kept answers without reading a
// body; the mutation as a JSON POST. A 400 to a request by id sends the text: the server does not know the id
// (PERSISTED_QUERY_NOT_FOUND: another release, mid-deploy), or knows no ids at all (an earlier release refuses the
// GET as a possible CSRF and the POST for its missing query). The text goes as a GET with Apollo's preflight header
// past its CSRF prevention.

/** @import { PageDocument } from './types.js' */

import { t } from './texts.js';

/**
 * @typedef {object} Answer
 * @property {number} status
 * @property {any} [data]
 * @property {{ message: string }[]} [errors]
 */

/**
 * The document's data, or an Error with the server's messages.
 * @param {PageDocument} document
 * @param {Record<string, unknown>} variables
 * @param {'GET' | 'POST'} [method]
 * @returns {Promise<any>}
 */
export async function graphql(document, variables, method = 'GET') {
  let body = await send(document, variables, method, true);
  if (body.status === 400) body = await send(document, variables, method, false);
  if (body.errors && body.errors.length > 0) throw new Error(body.errors.map((e) => e.message).join('\n'));
  if (!body.data) throw new Error(t('error.server', { status: body.status }));
  return body.data;
}

/**
 * @param {PageDocument} document
 * @param {Record<string, unknown>} variables
 * @param {'GET' | 'POST'} method
 * @param {boolean} byId
 * @returns {Promise<Answer>}
 */
async function send(document, variables, method, byId) {
  /** @type {Record<string, string>} */
  const question = byId ? { documentId: document.id } : { query: document.text };
  const response =
    method === 'POST'
      ? await fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ ...question, variables }),
        })
      : await fetch(`/graphql?${new URLSearchParams({ ...question, variables: JSON.stringify(variables) })}`, {
          headers: byId
            ? { accept: 'application/json' }
            : { 'apollo-require-preflight': 'true', accept: 'application/json' },
          cache: 'no-store',
        });
  let body;
  try {
    body = await response.json();
  } catch {
    throw new Error(t('error.server', { status: response.status }));
  }
  if (!response.ok && !(body && body.errors)) throw new Error(t('error.server', { status: response.status }));
  return { ...body, status: response.status };
}
