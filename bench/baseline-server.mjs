// The baseline Kassa is measured against, in the same run: bare Express 5 and
// `pg` serving the same JSON for GET, and a raw `pg` insert of the same rows
// for create (no auth, no validation, no quoting, no Prisma).
import { randomUUID } from 'node:crypto';
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = express();
app.use(express.json());

const fixed = (value) => Number(value).toFixed(8);

app.get('/checkout-sessions/:id', async (req, res) => {
  const { rows } = await pool.query(
    `SELECT s.*, COALESCE((SELECT json_agg(q ORDER BY q.position) FROM checkout_session_quotes q WHERE q.session_id = s.id), '[]') AS quotes,
            COALESCE((SELECT json_agg(n ORDER BY n.position) FROM checkout_session_networks n WHERE n.session_id = s.id), '[]') AS networks
       FROM checkout_sessions s WHERE s.id = $1`,
    [req.params.id],
  );
  const s = rows[0];
  if (!s) return res.status(404).json({ statusCode: 404, message: 'not found', error: 'Not Found' });
  res.json({
    session_id: s.id, status: s.status, source: s.source, from_payment_link: s.from_payment_link, anonymous: s.anonymous,
    requires_payer_identity: s.requires_payer_identity, identity_options: s.identity_options, product_payment_link_id: s.product_payment_link_id,
    total_amount_crypto: s.total_amount_crypto, crypto_currency: s.crypto_currency,
    crypto_options: s.quotes.map((q) => ({ ticker: q.ticker, id: q.asset_id, unit_price_fiat: fixed(q.unit_price_fiat), amount: fixed(q.amount) })),
    fiat_currency: s.fiat_currency, total_amount_fiat: fixed(s.total_amount_fiat), wallet_address: s.networks[0]?.wallet_address ?? '',
    supported_networks: s.supported_networks, expires_at: s.expires_at, overpaid: s.overpaid, bound_tx_hash: s.bound_tx_hash,
    payer_wallet_address: s.payer_wallet_address, chain_id: s.chain_id,
    user: { id: s.user_id, email: s.user_email, telegram_id: s.user_telegram_id, username: s.user_username },
  });
});

app.post('/checkout-sessions', async (req, res) => {
  const template = JSON.parse(process.env.BENCH_TEMPLATE);
  const id = randomUUID();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO checkout_sessions (id, organisation_id, status, source, fiat_currency, total_amount_fiat, supported_networks, expires_at, user_id, user_email, metadata)
       VALUES ($1, $2, 'waiting_payment', 'api', 'USD', $3, $4, now() + interval '60 minutes', $5, $6, '{}')`,
      [id, template.organisationId, template.total, template.networks, req.body.user.id, req.body.user.email],
    );
    await client.query(
      `INSERT INTO checkout_session_items (session_id, position, name, quantity, unit_price, total_price) VALUES ($1, 0, $2, $3, $4, $5)`,
      [id, req.body.items[0].name, req.body.items[0].quantity, req.body.items[0].unit_price, template.total],
    );
    for (const [position, q] of template.quotes.entries()) {
      await client.query(
        `INSERT INTO checkout_session_quotes (session_id, position, ticker, asset_id, unit_price_fiat, amount, rate_source, rated_at, rounding)
         VALUES ($1, $2, $3, $4, $5, $6, 'static', now(), 'ceil')`,
        [id, position, q.ticker, q.id, q.unit_price_fiat, q.amount],
      );
    }
    await client.query(`INSERT INTO checkout_session_networks (session_id, position, network, chain_id, wallet_address) VALUES ($1, 0, 'local', '31337', $2)`, [id, template.wallet]);
    await client.query(`INSERT INTO checkout_session_status_history (session_id, to_status, cause) VALUES ($1, 'waiting_payment', 'bench')`, [id]);
    await client.query(`INSERT INTO outbox_events (id, organisation_id, session_id, type, payload) VALUES ($1, $2, $3, 'checkout_session.created', $4)`, [randomUUID(), template.organisationId, id, JSON.stringify(req.body)]);
    await client.query('COMMIT');
    res.status(201).json({ session_id: id, status: 'waiting_payment' });
  } catch (error) {
    await client.query('ROLLBACK');
    res.status(500).json({ statusCode: 500, message: String(error), error: 'Internal Server Error' });
  } finally {
    client.release();
  }
});

const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
