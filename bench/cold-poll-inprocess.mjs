// `node bench/cold-poll-inprocess.mjs <database> <session id>`: the CPU of a cold read's parts in process, no HTTP and
// no round trip (a database kept by `PROF_KEEP_DB=1 node bench/profile.mjs cold-get`): kassa_read_session's text parsed
// into a session, the REST GET's body, and the page's GraphQL poll written by the cold lane's compiled writer. Each the
// least of 30 rounds of 500, in µs a read.
import { parse } from 'graphql';
import pg from 'pg';
import 'reflect-metadata';
import { loadConfig } from '../dist/config.js';
import { graphqlSchema } from '../dist/graphql/schema.js';
import { compileObject, fieldsWithResolvers } from '../dist/graphql/cold-writer.js';
import { SESSION_FIELDS, SessionRead, toGraphqlTransactions } from '../dist/graphql/views.js';
import { PAGE_DOCUMENTS } from '../dist/graphql/page-documents.js';
import { readSessionForRead, boundTransactionsRead } from '../dist/db/sessions/session-read-function.js';
import { publicViewResponse } from '../dist/rest/public-view-response.js';
import { benchKassaEnv, databaseUrl } from './support.mjs';

const [database, id] = process.argv.slice(2);
const url = databaseUrl(database);
const client = new pg.Client({ connectionString: url });
await client.connect();
const text = (await client.query('SELECT kassa_read_session($1::uuid) AS t', [id])).rows[0].t;
await client.end();
const config = loadConfig(benchKassaEnv({ DATABASE_URL: url }));
const ctx = { networks: config.networks };
const schema = await graphqlSchema();
const sessionType =
  schema.getQueryType().getFields().checkoutSession.type.ofType ??
  schema.getQueryType().getFields().checkoutSession.type;
const operation = parse(PAGE_DOCUMENTS.CheckoutPoll).definitions[0];
const field = operation.selectionSet.selections[0];
const write = compileObject(sessionType, field.selectionSet, fieldsWithResolvers(), SESSION_FIELDS, {
  ownResolvers: new Set(['transactions']),
  timeField: 'secondsUntilExpiry',
});
const statement = async () => [[text]];
const now = new Date();

/** The least CPU a read of 30 rounds of 500, in µs: `round` times its 500 reads and answers process.cpuUsage's delta. */
async function leastOf(name, round) {
  let best = Infinity;
  for (let i = 0; i < 30; i++) {
    const used = await round();
    best = Math.min(best, (used.user + used.system) / 500);
  }
  console.log(name.padEnd(40), best.toFixed(1), 'µs');
}
const readAll = async () => {
  const sessions = [];
  for (let i = 0; i < 500; i++) sessions.push(await readSessionForRead(statement, id));
  return sessions;
};
/** `fn` on 500 sessions parsed before the clock starts. */
const measure = (name, fn) =>
  leastOf(name, async () => {
    const sessions = await readAll();
    const started = process.cpuUsage();
    for (const session of sessions) fn(session);
    return process.cpuUsage(started);
  });
await measure('nothing (baseline)', () => {});
await leastOf('parse kassa_read_session text', async () => {
  const started = process.cpuUsage();
  await readAll();
  return process.cpuUsage(started);
});
await measure('REST body (publicViewResponse)', (s) => publicViewResponse(s));
await measure('poll writer', (s) =>
  write(new SessionRead(s, ctx, now), { transactions: toGraphqlTransactions(boundTransactionsRead(s)) }, ['']),
);
await measure('poll writer, options only', (s) => new SessionRead(s, ctx, now).paymentChoices);
process.exit(0);
