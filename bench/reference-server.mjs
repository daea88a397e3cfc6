// The reference Kassa is measured against (issue 10): what a strong engineer would write by
// hand for the same two routes. Express 5 + `pg`, the same HMAC check as Kassa's create
// (HMAC-SHA256 of `{timestamp}.{rawBody}`, constant-time compare, ±5 minutes), and ONE round
// trip per request:
//   GET    one statement returning the session with its quotes and networks as JSON;
//   create one `WITH … INSERT` statement writing the session, its items, quotes, network,
//          history row and outbox event.
// It does no validation beyond what it needs, no idempotency, no rate limit, no replay cache,
// no unique amounts and no logging: it is the floor Kassa's extra work is priced against.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import express from 'express';
import pg from 'pg';

const template = JSON.parse(process.env.BENCH_TEMPLATE);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = express();
app.disable('x-powered-by');

const fixed = (value) => (value === null ? null : Number(value).toFixed(8));

app.get('/checkout-sessions/:id', async (req, res) => {
  const { rows } = await pool.query(
    `SELECT json_build_object('s', to_json(s),
              'q', COALESCE((SELECT json_agg(q ORDER BY q.position) FROM checkout_session_quotes q WHERE q.session_id = s.id), '[]'),
              'n', COALESCE((SELECT json_agg(n ORDER BY n.position) FROM checkout_session_networks n WHERE n.session_id = s.id), '[]')) AS row
       FROM checkout_sessions s WHERE s.id = $1`,
    [req.params.id],
  );
  const row = rows[0]?.row;
  if (!row) return res.status(404).json({ statusCode: 404, message: 'not found', error: 'Not Found' });
  const s = row.s;
  res.json({
    session_id: s.id,
    status: s.status,
    source: s.source,
    from_payment_link: s.from_payment_link,
    anonymous: s.anonymous,
    requires_payer_identity: s.requires_payer_identity,
    identity_options: s.identity_options,
    product_payment_link_id: s.product_payment_link_id,
    total_amount_crypto: fixed(s.total_amount_crypto),
    crypto_currency: s.crypto_currency,
    crypto_options: row.q.map((q) => ({
      ticker: q.ticker,
      id: q.asset_id,
      unit_price_fiat: fixed(q.unit_price_fiat),
      amount: fixed(q.amount),
    })),
    fiat_currency: s.fiat_currency,
    total_amount_fiat: fixed(s.total_amount_fiat),
    wallet_address: row.n[0]?.wallet_address ?? '',
    supported_networks: s.supported_networks,
    expires_at: new Date(s.expires_at).toISOString(),
    overpaid: s.overpaid,
    bound_tx_hash: s.bound_tx_hash,
    payer_wallet_address: s.payer_wallet_address,
    chain_id: s.chain_id,
    user: { id: s.user_id, email: s.user_email, telegram_id: s.user_telegram_id, username: s.user_username },
  });
});

function signatureValid(req, rawBody) {
  const key = req.get('x-service-key');
  const timestamp = req.get('x-service-timestamp');
  const signature = req.get('x-service-signature') ?? '';
  if (
    key !== template.apiKey ||
    !/^\d{1,16}$/.test(timestamp ?? '') ||
    Math.abs(Date.now() - Number(timestamp)) > 300_000
  )
    return false;
  const expected = createHmac('sha256', template.apiSecret).update(`${timestamp}.`).update(rawBody).digest();
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

app.post('/checkout-sessions', express.raw({ type: 'application/json', limit: '100kb' }), async (req, res) => {
  if (!signatureValid(req, req.body))
    return res.status(401).json({ statusCode: 401, message: 'Invalid signature', error: 'Unauthorized' });
  const body = JSON.parse(req.body.toString('utf8'));
  const id = randomUUID();
  const item = body.items[0];
  const quotes = template.quotes;
  await pool.query(
    `WITH s AS (
       INSERT INTO checkout_sessions (id, organisation_id, status, source, fiat_currency, total_amount_fiat, supported_networks, expires_at,
                                      quoted_at, user_id, user_email, metadata)
       VALUES ($1, $2, 'waiting_payment', 'api', $3, $4, $5, now() + interval '60 minutes', now(), $6, $7, '{}') RETURNING id),
     i AS (INSERT INTO checkout_session_items (session_id, position, name, quantity, unit_price, total_price)
           SELECT id, 0, $8, $9, $10, $4 FROM s),
     q AS (INSERT INTO checkout_session_quotes (session_id, position, ticker, asset_id, unit_price_fiat, amount, base_amount, rate_source, rated_at, rounding)
           SELECT s.id, t.position, t.ticker, t.asset_id, t.price, t.amount, t.amount, 'static', now(), 'ceil'
             FROM s, unnest($11::int[], $12::text[], $13::text[], $14::numeric[], $15::numeric[]) AS t(position, ticker, asset_id, price, amount)),
     n AS (INSERT INTO checkout_session_networks (session_id, position, network, chain_id, wallet_address) SELECT id, 0, $16, $17, $18 FROM s),
     h AS (INSERT INTO checkout_session_status_history (session_id, to_status, cause) SELECT id, 'waiting_payment', 'created by merchant API' FROM s)
     INSERT INTO outbox_events (id, organisation_id, session_id, type, payload) SELECT $19, $2, id, 'checkout_session.created', $20 FROM s`,
    [
      id,
      template.organisationId,
      body.currency,
      template.total,
      template.networks,
      body.user.id,
      body.user.email,
      item.name,
      item.quantity,
      String(item.unit_price),
      quotes.map((_, i) => i),
      quotes.map((q) => q.ticker),
      quotes.map((q) => q.id),
      quotes.map((q) => q.unit_price_fiat),
      quotes.map((q) => q.amount),
      template.networks[0],
      template.chainId,
      template.wallet,
      randomUUID(),
      JSON.stringify({ session_id: id, ...body }),
    ],
  );
  res
    .status(201)
    .json({ session_id: id, status: 'waiting_payment', total_amount_fiat: template.total, crypto_options: quotes });
});

const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
