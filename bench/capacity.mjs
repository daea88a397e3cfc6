// `BENCH_ONLY=capacity npm run bench`: how many open sessions one price can hold on one wallet (docs/benchmarks.md,
// capacity of one price; docs/payment-rules.md, rule 4). Counted, not timed: Kassa on a fresh PostgreSQL database,
// creates of one basket until the first 409, for each KASSA_UNIQUE_AMOUNT_STEPS in BENCH_CAPACITY_STEPS (100,250):
//   api        the merchant's signed creates alone;
//   link       visits of an open-amount payment link at the same price, then the merchant's creates after them
//              (link sessions take only the odd steps, so the merchant's creates keep the other half).
// What the 409 says is printed with it. No chain: capacity is what the claims allow, whatever is paid.
import { createHmac, randomBytes } from 'node:crypto';

// Not a multiple of the basket startKassaFor's first session buys (19.99 × 1–999), so that one takes none of these amounts.
const PRICE = '77.77';

function signedCreate(key, body) {
  const timestamp = String(Date.now());
  return {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-key': key.api_key,
      'x-service-timestamp': timestamp,
      'x-service-signature': createHmac('sha256', key.api_secret).update(`${timestamp}.${body}`).digest('hex'),
    },
  };
}

/** POSTs `request()` until the first answer that is not 201; returns how many were 201 and that answer. */
async function untilRefused(url, request, limit) {
  for (let created = 0; created < limit; created += 1) {
    const response = await fetch(url, request());
    if (response.status === 409) return { created, refusal: (await response.json()).message };
    if (response.status !== 201) throw new Error(`capacity: ${response.status} ${await response.text()}`);
    await response.arrayBuffer().catch(() => undefined);
  }
  return { created: limit, refusal: null };
}

/**
 * `start(env)` starts a Kassa on a fresh database with `env` added and returns { url, cli, org, key, stop }
 * (bench/run.mjs). Returns one row per setting.
 */
export async function runCapacityBench(start, stepsList) {
  const rows = [];
  for (const steps of stepsList) {
    const env = { KASSA_UNIQUE_AMOUNT_STEPS: String(steps), KASSA_RATE_LIMIT_LINK_SESSIONS: '1000000/1m' };
    const limit = steps * 2 + 10;
    const apiBody = () =>
      JSON.stringify({
        user: { id: `bench-${randomBytes(6).toString('hex')}`, email: 'bench@example.com' },
        items: [{ name: 'Bench item', quantity: 1, unit_price: Number(PRICE) }],
        currency: 'USD',
      });

    const alone = await start(env, `capacity-api-${steps}`);
    let api;
    try {
      api = await untilRefused(`${alone.url}/checkout-sessions`, () => signedCreate(alone.key, apiBody()), limit);
    } finally {
      await alone.stop();
    }

    const shared = await start(env, `capacity-link-${steps}`);
    let link;
    let apiAfterLink;
    try {
      const created = shared.cli(
        'links',
        'create',
        '--org',
        shared.org.id,
        '--name',
        'Tip jar',
        '--currency',
        'USD',
        '--amount-min',
        '1',
        '--amount-max',
        '500',
      );
      const visit = () => ({
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: PRICE }),
      });
      link = await untilRefused(`${shared.url}/payment-links/${created.payment_link_id}/sessions`, visit, limit);
      apiAfterLink = await untilRefused(
        `${shared.url}/checkout-sessions`,
        () => signedCreate(shared.key, apiBody()),
        limit,
      );
    } finally {
      await shared.stop();
    }
    rows.push({
      steps,
      api: api.created,
      link: link.created,
      apiAfterLink: apiAfterLink.created,
      refusal: api.refusal,
      linkRefusal: link.refusal,
    });
  }
  return rows;
}
