import { mkdirSync } from 'node:fs';
import express from 'express';
import supertest from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { settleExpiry } from '../../src/domain/sessions/get-checkout-session.js';
import { checkoutPageRouter } from '../../src/rest/checkout-page.routes.js';
import { PAGE_SCRIPTS } from '../../src/rest/hosted-page.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { eip681Uri } from '../../src/domain/payments/payment-uri.js';
import { PAGE_DOCUMENT_DATA } from '../../src/graphql/page-documents.js';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { imageWidth, launchBrowser, type TestBrowser } from '../support/browser.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { controllableClock, createSession, postBind } from '../support/rest-kassa.js';

/**
 * The hosted checkout page (`checkout_url`): over real HTTP on a real PostgreSQL,
 * then in a real browser (system Chromium, or the one @sparticuz/chromium ships) against a
 * Kassa watching a real anvil, paid by real transfers.
 */

const ARTIFACTS = new URL('../.artifacts/', import.meta.url);
const USDT_ETHEREUM = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

let kassa: TestKassa;
let merchant: TestMerchant;

beforeAll(async () => {
  kassa = await startTestKassa();
  merchant = await createMerchant(kassa.ctx);
});

afterAll(async () => {
  await kassa?.close();
});

/** The session's checkout_url, pointed at the test server instead of CHECKOUT_BASE_URL. */
function localUrl(session: Record<string, any>): string {
  const url = new URL(session.checkout_url);
  expect(url.origin).toBe(kassa.config.checkoutBaseUrl);
  expect(url.pathname).toBe(`/pay/${session.session_id}`);
  return `${kassa.url}${url.pathname}`;
}

describe('GET /pay/:id', () => {
  it('serves the page for a session with a strict Content-Security-Policy', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const response = await kassa.http.get(new URL(localUrl(session)).pathname);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    const csp = response.headers['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    // 'self' covers the page's own ws:/wss: (CSP Level 3); a bare ws: or wss: would let a script open a socket to any host.
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toMatch(/\b(ws|wss):(?!\/\/)/);
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.text).toContain('<noscript>');
    expect(response.text).toContain('src="/pay/assets/pay.js"');
    // No inline code and nothing from another origin.
    expect(response.text).not.toMatch(/<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>/);
    expect(response.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    const data = JSON.parse(
      /<script type="application\/json" id="kassa-page-data">(.*?)<\/script>/.exec(response.text)![1]!,
    );
    expect(data).toMatchObject({
      sessionId: session.session_id,
      wallets: { ethereum: merchant.wallet, bsc: merchant.wallet, local: merchant.wallet },
      developmentHints: false,
      lang: 'en',
      brand: null,
    });
    // Every text of the page's script comes with it, in the page's language.
    expect(data.messages['status.waiting_payment']).toBe('Waiting for payment');
    // The merchant is named at the top; no placeholder is left unfilled.
    expect(response.text).toMatch(/<span class="merchant-name">Merchant \d+<\/span>/);
    expect(response.text).not.toMatch(/\{\{[\w.]+\}\}|<!--kassa:/);
  });

  it('serves its script and styles with the same policy', async () => {
    const script = await kassa.http.get('/pay/assets/pay.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.headers['content-security-policy']).toContain("default-src 'self'");
    const styles = await kassa.http.get('/pay/assets/pay.css');
    expect(styles.status).toBe(200);
    expect(styles.headers['content-type']).toMatch(/^text\/css/);
    // Every module the pages import (docs/hosted-pages.md#the-page-scripts), as a script, revalidated like the styles.
    for (const file of PAGE_SCRIPTS) {
      const module = await kassa.http.get(`/pay/assets/${file}`);
      expect(module.status, file).toBe(200);
      expect(module.headers['content-type'], file).toMatch(/^text\/javascript/);
      expect(module.headers['cache-control'], file).toBe('no-cache');
      expect(module.headers['x-content-type-options'], file).toBe('nosniff');
    }
    expect((await kassa.http.get('/pay/assets/types.d.ts')).status).toBe(404);
    expect((await kassa.http.get('/pay/assets/tsconfig.json')).status).toBe(404);
  });

  it('answers a malformed id with a 400 HTML page and an unknown id with a 404 HTML page', async () => {
    const malformed = await kassa.http.get('/pay/not-a-session');
    expect(malformed.status).toBe(400);
    expect(malformed.headers['content-type']).toMatch(/^text\/html/);
    expect(malformed.headers['content-security-policy']).toContain("default-src 'self'");
    expect(malformed.text).toContain('This payment link is not valid');

    const unknown = await kassa.http.get('/pay/0b0e2a61-3a57-4f3c-9d4e-9b2f6c1d2e3f');
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^text\/html/);
    expect(unknown.text).toContain('This checkout does not exist');
  });

  it('tells the payer about `kassa dev pay` only when the server runs in development', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const development = supertest(express().use(checkoutPageRouter(kassa.ctx, { developmentHints: true })));
    const response = await development.get(`/pay/${session.session_id}`);
    expect(response.status).toBe(200);
    expect(response.text).toContain('"developmentHints":true');
  });

  it('allows only GET', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const response = await kassa.http
      .post(`/pay/${session.session_id}`)
      .set('Content-Type', 'application/json')
      .send('{}');
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET');
  });
});

describe('GET /pay/:id/qr.svg', () => {
  it('draws the EIP-681 request of the chosen network and asset as SVG', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const usdt = session.crypto_options.find((o: { ticker: string }) => o.ticker === 'USDT');
    const token = await kassa.http.get(`/pay/${session.session_id}/qr.svg?network=ethereum&asset=USDT`);
    expect(token.status).toBe(200);
    expect(token.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(Buffer.from(token.body).toString('utf8')).toMatch(/^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(token.headers['x-payment-uri']).toBe(
      eip681Uri({
        chainId: '1',
        walletAddress: merchant.wallet,
        contractAddress: USDT_ETHEREUM,
        decimals: 6,
        amount: new Decimal(usdt.amount),
      }),
    );
    const native = await kassa.http.get(`/pay/${session.session_id}/qr.svg?network=bsc&asset=BNB`);
    expect(native.status).toBe(200);
    expect(native.headers['x-payment-uri']).toMatch(new RegExp(`^ethereum:${merchant.wallet}@56\\?value=\\d+$`));
  });

  it('refuses a network or asset the session does not offer with 400', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const path = `/pay/${session.session_id}/qr.svg`;
    for (const query of [
      '',
      '?network=ethereum',
      '?asset=USDT',
      '?network=polygon&asset=USDT',
      '?network=ethereum&asset=DOGE',
      '?network=ethereum&asset=BNB',
      '?network=ethereum&network=bsc&asset=USDT',
    ]) {
      const response = await kassa.http.get(`${path}${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.statusCode, query).toBe(400);
    }
    expect((await kassa.http.get('/pay/nope/qr.svg?network=ethereum&asset=USDT')).status).toBe(400);
    expect(
      (await kassa.http.get('/pay/0b0e2a61-3a57-4f3c-9d4e-9b2f6c1d2e3f/qr.svg?network=ethereum&asset=USDT')).status,
    ).toBe(404);
  });

  it('once an asset and chain are selected (by a verified bind or an exact payment), offers only those', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const usdc = session.crypto_options.find((o: { ticker: string }) => o.ticker === 'USDC');
    // As verifying a bound transaction on BNB Smart Chain writes it.
    await kassa.runtime.db.prisma.checkoutSession.update({
      where: { id: session.session_id },
      data: { cryptoCurrency: 'USDC', chainId: '56', totalAmountCrypto: usdc.amount },
    });
    expect((await kassa.http.get(`/pay/${session.session_id}/qr.svg?network=bsc&asset=USDC`)).status).toBe(200);
    expect((await kassa.http.get(`/pay/${session.session_id}/qr.svg?network=bsc&asset=USDT`)).status).toBe(400);
    const otherChain = await kassa.http.get(`/pay/${session.session_id}/qr.svg?network=ethereum&asset=USDC`);
    expect(otherChain.status).toBe(400);
    expect(otherChain.body.message).toEqual(['network must be bsc, the network this session is paid on']);
  });
});

describe('the checkout page in a real browser, paid on a real chain', () => {
  // Launched by the first test that needs it, so a missing chromium fails every browser test (a failing hook would count them as skipped).
  let browser: TestBrowser | undefined;
  let chain: TestChain;
  let node: ChainKassa;
  let shop: TestMerchant;
  const time = controllableClock();

  beforeAll(async () => {
    chain = await startTestChain();
    // Three confirmations: a payment is on chain ("detected") for two blocks before it counts.
    node = await startChainKassa(chain.url, {
      clock: time.clock,
      env: { KASSA_NETWORKS: 'local,bsc,ethereum', KASSA_CONFIRMATIONS_LOCAL: '3' },
    });
    shop = await createMerchant(node.kassa.ctx);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await node?.close();
    await chain?.stop();
  });

  afterEach(() => time.release());

  async function newPage(): Promise<Page> {
    browser ??= await launchBrowser();
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    pageProblems.set(page, problems);
    return page;
  }
  const pageProblems = new Map<Page, string[]>();

  /** Mines enough blocks for what is on chain to confirm, and lets the watcher look. */
  const confirm = async () => {
    await chain.mine(3);
    await node.watchers.tick();
  };
  const openAt = (session: Record<string, any>) => `${node.kassa.url}/pay/${session.session_id}`;
  const text = (page: Page, selector: string) => page.locator(selector).innerText();

  /**
   * The page asks for `amount` USDT on the sandbox everywhere: the amount shown, the QR code (its image's URL names the
   * amount, so a new one is drawn for a new amount) and the wallet link, both the server's payment request for it.
   */
  async function expectAsksForUsdt(page: Page, session: Record<string, any>, amount: Decimal) {
    expect(await text(page, '#amount')).toBe(`${amount.toFixed(6)} USDT`);
    const qr = await page.locator('#qr').getAttribute('src');
    expect(qr).toBe(`/pay/${session.session_id}/qr.svg?network=local&asset=USDT&amount=${amount.toFixed(6)}`);
    const uri = (await node.kassa.http.get(qr!)).headers['x-payment-uri'];
    expect(uri).toContain(`uint256=${amount.times(1e6).toFixed(0)}`);
    expect(await page.locator('#wallet-link').getAttribute('href')).toBe(uri);
  }

  it('fetches every module of its script at once, from the page’s modulepreload links', async () => {
    const session = await createSession(node.kassa, shop, checkoutRequest());
    const page = await newPage();
    // Who asked for each script: the HTML parser (the script tag, a modulepreload link) or a module's imports.
    const devtools = await page.context().newCDPSession(page);
    const fetched: [string, string][] = [];
    devtools.on('Network.requestWillBeSent', ({ request, initiator }) => {
      const path = new URL(request.url).pathname;
      if (path.startsWith('/pay/assets/') && path.endsWith('.js')) fetched.push([path, initiator.type]);
    });
    await devtools.send('Network.enable');
    await page.goto(openAt(session));
    await page.locator('#summary').waitFor();
    // A module found only by reading another's imports costs a round trip per level (docs/hosted-pages.md#the-page-scripts).
    const modules = PAGE_SCRIPTS.filter((file) => fetched.some(([path]) => path === `/pay/assets/${file}`));
    expect(modules).toContain('pay.js');
    expect(fetched).toHaveLength(modules.length);
    // With the styles, at most six requests: as many as a browser opens at once to one host over HTTP/1.1.
    expect(modules.length).toBeLessThanOrEqual(5);
    for (const [path, initiator] of fetched) expect(initiator, path).toBe('parser');
    expect(pageProblems.get(page)).toEqual([]);
  });

  it(
    'shows exactly what to send in the token’s own units, binds the payer’s transaction and follows the chain live to paid',
    { timeout: 60_000 },
    async () => {
      const session = await createSession(node.kassa, shop, checkoutRequest());
      const usdt = new Decimal(session.crypto_options.find((o: { ticker: string }) => o.ticker === 'USDT').amount);
      const page = await newPage();
      await page.goto(openAt(session));

      // What is being paid for.
      await page.locator('#summary').waitFor();
      expect(await page.locator('#items tbody tr').count()).toBe(2);
      expect(await text(page, '#items tbody')).toContain('Coffee beans');
      expect(await text(page, '#total-fiat')).toBe('105.00 USD');
      expect(await text(page, '#status')).toBe('Waiting for payment');
      expect(await text(page, '#countdown')).toMatch(/^(1:00:00|59:\d\d)$/);
      await page.locator('#live-state[data-live="socket"]').waitFor();

      // USDT on Ethereum: 6 decimals, so six digits, never eight a wallet cannot send.
      await page.locator('#assets label', { hasText: 'USDT' }).click();
      await page.locator('#networks label', { hasText: 'Ethereum' }).click();
      await page.locator('#instructions').waitFor();
      expect(await text(page, '#amount')).toBe(`${usdt.toFixed(6)} USDT`);
      expect(await text(page, '#token-contract')).toBe(USDT_ETHEREUM);
      expect(await text(page, '#token-decimals')).toBe('6');
      // On BNB Smart Chain USDT has 18 decimals: the same amount.
      await page.locator('#networks label', { hasText: 'BNB Smart Chain' }).click();
      expect(await text(page, '#amount')).toBe(`${usdt.toFixed(8)} USDT`);
      // The sandbox: QR code and wallet link carry exactly the server's payment request.
      await page.locator('#networks label', { hasText: 'Local sandbox' }).click();
      expect(await text(page, '#amount')).toBe(`${usdt.toFixed(6)} USDT`);
      expect(await text(page, '#wallet')).toBe(shop.wallet);
      await expect.poll(() => imageWidth(page, '#qr')).toBeGreaterThan(0);
      await expectAsksForUsdt(page, session, usdt);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: new URL('checkout-page.png', ARTIFACTS).pathname, fullPage: true });

      // A malformed hash: the page shows GraphQL's message, which is REST's.
      await page.getByLabel('Transaction hash').fill('0x1234');
      await page.getByRole('button', { name: 'Confirm payment' }).click();
      await page.locator('#bind-error').waitFor();
      expect(await text(page, '#bind-error')).toContain('tx_hash must match');

      // The payer sends half from their wallet and pastes the hash: found on chain, it pays this checkout (a first
      // part pays half at least: docs/payment-rules.md, rule 3).
      const half = usdt.dividedBy(2).toDecimalPlaces(6, Decimal.ROUND_UP);
      const first = await chain.pay(shop.wallet, 'USDT', half.toFixed(6), { from: 4 });
      await page.getByLabel('Transaction hash').fill(first.hash);
      await page.getByLabel(/Your wallet address/).fill(first.from);
      await page.getByRole('button', { name: 'Confirm payment' }).click();
      await page.locator('#bound-list li[data-state="VERIFIED"]', { hasText: first.hash }).waitFor({ timeout: 5_000 });
      await node.watchers.tick();
      await page.locator('#status', { hasText: 'Payment detected' }).waitFor({ timeout: 5_000 });
      await page.screenshot({ path: new URL('checkout-page-detected.png', ARTIFACTS).pathname, fullPage: true });

      // Confirmed: partial, and the page asks for exactly the rest.
      await confirm();
      await page.locator('#status', { hasText: 'Partially paid' }).waitFor({ timeout: 5_000 });
      const rest = usdt.minus(half);
      expect(await text(page, '#outcome-text')).toBe(
        `We received ${half.toFixed(8)} USDT of ${usdt.toFixed(8)}. Send exactly ${rest.toFixed(6)} USDT to the same address: that amount is this checkout's own and is recognised by itself. If you send another amount, enter that transaction's hash below.`,
      );
      // The QR code asks for the rest too: a new image, not the one drawn for the whole amount.
      await expectAsksForUsdt(page, session, rest);
      await expect.poll(() => imageWidth(page, '#qr')).toBeGreaterThan(0);
      await page.screenshot({ path: new URL('checkout-page-partial.png', ARTIFACTS).pathname, fullPage: true });
      // The rest: its amount is the session's own (it would pay by amount alone); the payer may bind it too.
      const second = await chain.pay(shop.wallet, 'USDT', rest.toFixed(6), { from: 4 });
      await page.getByLabel('Transaction hash').fill(second.hash);
      await page.getByRole('button', { name: 'Confirm payment' }).click();
      await page.locator('#bound-list li[data-state="VERIFIED"]', { hasText: second.hash }).waitFor({ timeout: 5_000 });
      await node.watchers.tick();
      await confirm();
      await page.locator('#status', { hasText: /^Paid$/ }).waitFor({ timeout: 5_000 });
      expect(await text(page, '#outcome-title')).toBe('Payment received');
      expect(await page.locator('#pay').isHidden()).toBe(true);
      expect(await page.locator('#live-state').getAttribute('data-live')).toBe('closed');
      expect(await node.kassa.http.get(`/checkout-sessions/${session.session_id}`).then((r) => r.body)).toMatchObject({
        status: 'paid',
        overpaid: false,
      });
      await page.screenshot({ path: new URL('checkout-page-paid.png', ARTIFACTS).pathname, fullPage: true });
      expect(pageProblems.get(page), pageProblems.get(page)!.join('\n')).toEqual([]);
      await page.close();
    },
  );

  it(
    'fits a 360 px phone and shows binds made elsewhere live: a hash no chain knows, then a payment that selects the asset',
    { timeout: 40_000 },
    async () => {
      const session = await createSession(
        node.kassa,
        shop,
        checkoutRequest({
          items: [{ name: 'Annual subscription, team plan with priority support', quantity: 1, unit_price: 1234.5 }],
        }),
      );
      const page = await newPage();
      await page.setViewportSize({ width: 360, height: 740 });
      await page.goto(openAt(session));
      await page.locator('#live-state[data-live="socket"]').waitFor();
      await page.locator('#assets label', { hasText: 'ETH' }).click();
      await page.locator('#instructions').waitFor();
      const overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow).toBe(0);
      expect(await text(page, '#total-fiat')).toBe('1,234.50 USD');
      await page.screenshot({ path: new URL('checkout-page-360.png', ARTIFACTS).pathname, fullPage: true });

      // A hash nobody's chain knows: shown as being checked; it selects nothing.
      const unknown = txHash(515151);
      expect(
        (await postBind(node.kassa, session.session_id, { tx_hash: unknown, chain_id: '56', crypto_currency: 'BNB' }))
          .status,
      ).toBe(200);
      await page.locator('#bound-list li[data-state="UNVERIFIED"]', { hasText: unknown }).waitFor({ timeout: 5_000 });
      expect(await page.locator('#assets input').count()).toBe(6);
      // A real ETH payment on the sandbox, bound from another device: verified, and the page offers only ETH there.
      const eth = session.crypto_options.find((o: { ticker: string }) => o.ticker === 'ETH').amount as string;
      const sent = await chain.pay(shop.wallet, 'ETH', eth, { from: 5 });
      expect(
        (
          await postBind(node.kassa, session.session_id, {
            tx_hash: sent.hash,
            chain_id: '31337',
            crypto_currency: 'ETH',
          })
        ).status,
      ).toBe(200);
      await page.locator('#bound-list li[data-state="VERIFIED"]', { hasText: sent.hash }).waitFor({ timeout: 5_000 });
      expect(await page.getByRole('radio').count()).toBe(2);
      expect(await text(page, '#network-name')).toBe('Local sandbox (anvil) (chain id 31337)');
      await page.close();
    },
  );

  it(
    'when time runs out while a payment confirms, says so instead of expiring, then shows it paid',
    { timeout: 40_000 },
    async () => {
      const session = await createSession(node.kassa, shop, checkoutRequest({ expires_in_minutes: 5 }));
      const page = await newPage();
      await page.goto(openAt(session));
      await page.locator('#live-state[data-live="socket"]').waitFor();
      const sol = session.crypto_options.find((o: { ticker: string }) => o.ticker === 'SOL').amount as string;
      await chain.pay(shop.wallet, 'SOL', sol, { from: 6 });
      await node.watchers.tick();
      await page.locator('#status', { hasText: 'Payment detected' }).waitFor({ timeout: 5_000 });
      expect(await text(page, '#outcome-title')).toBe('Payment detected');
      // Kassa's clock passes expires_at; the page reads again and keeps the checkout open.
      time.freeze(Date.parse(session.expires_at) + 10_000);
      await page.reload();
      await page.locator('#status', { hasText: 'Payment detected' }).waitFor({ timeout: 5_000 });
      expect(await text(page, '#countdown-box')).toBe('Time is up: waiting for confirmations');
      // It covers what is owed: the page does not invite the payer to pay again.
      expect(await page.locator('#pay').isHidden()).toBe(true);
      expect(await page.locator('#bind').isHidden()).toBe(true);
      await page.screenshot({
        path: new URL('checkout-page-time-up-detected.png', ARTIFACTS).pathname,
        fullPage: true,
      });
      await confirm();
      expect((await node.kassa.http.get(`/checkout-sessions/${session.session_id}`)).body).toMatchObject({
        status: 'paid',
      });
      await page.locator('#status', { hasText: /^Paid$/ }).waitFor({ timeout: 5_000 });
      await page.close();
    },
  );

  it('falls back to polling when the WebSocket is refused, and shows expiry', { timeout: 30_000 }, async () => {
    const session = await createSession(node.kassa, shop, checkoutRequest());
    const page = await newPage();
    // As behind a proxy that does not pass WebSockets.
    await page.routeWebSocket(/\/graphql$/, (socket) => socket.close());
    // Its queries go as GET by documentId, no preflight header (the server answers a repeated one from its kept
    // answers, no body to read; src/graphql/page-documents.ts).
    const asked: string[] = [];
    const questions: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname !== '/graphql') return;
      asked.push(request.method());
      questions.push([...url.searchParams.keys()].join(','));
      expect(request.headers()['apollo-require-preflight']).toBeUndefined();
    });
    await page.goto(openAt(session));
    await page.locator('#live-state[data-live="polling"]').waitFor();
    expect(await text(page, '#status')).toBe('Waiting for payment');

    // Time is up and the watcher has looked past expires_at: nothing was sent, the session expires.
    time.freeze(Date.parse(session.expires_at) + 60_000);
    await node.watchers.tick();
    expect((await settleExpiry(node.kassa.ctx, session.session_id, time.clock())).status).toBe('expired');
    await page.locator('#status', { hasText: 'Expired' }).waitFor({ timeout: 8_000 });
    expect(await text(page, '#outcome-title')).toBe('This checkout has expired');
    expect(await page.locator('#pay').isHidden()).toBe(true);
    expect(await page.locator('#bind').isHidden()).toBe(true);
    expect(await page.locator('#live-state').getAttribute('data-live')).toBe('closed');
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(new Set(asked)).toEqual(new Set(['GET']));
    expect(new Set(questions)).toEqual(new Set(['documentId,variables']));
    await page.close();
  });

  it(
    'polls only what can change, and reads the whole session once each time its payment options change',
    { timeout: 60_000 },
    async () => {
      const session = await createSession(node.kassa, shop, checkoutRequest());
      const usdt = new Decimal(session.crypto_options.find((o: { ticker: string }) => o.ticker === 'USDT').amount);
      const page = await newPage();
      await page.routeWebSocket(/\/graphql$/, (socket) => socket.close());
      const { CheckoutPage, CheckoutSession, CheckoutPoll } = PAGE_DOCUMENT_DATA;
      const asked: string[] = [];
      page.on('requestfinished', (request) => {
        const url = new URL(request.url());
        if (url.pathname === '/graphql') asked.push(url.searchParams.get('documentId') ?? 'text');
      });
      const polls = () => asked.filter((id) => id === CheckoutPoll.id).length;
      const wholeReads = () => asked.filter((id) => id === CheckoutSession.id).length;
      await page.goto(openAt(session));
      await page.locator('#live-state[data-live="polling"]').waitFor();
      // Nothing changes: two polls, and the whole session is not read again.
      await expect.poll(polls, { timeout: 12_000, interval: 100 }).toBeGreaterThanOrEqual(2);
      expect(asked[0]).toBe(CheckoutPage.id);
      expect(wholeReads()).toBe(0);
      expect(await page.locator('#assets input').count()).toBe(6);
      // The payer has chosen USDT on the sandbox before anything changes.
      await page.locator('#assets label', { hasText: 'USDT' }).click();
      await page.locator('#networks label', { hasText: 'Local sandbox' }).click();
      expect(await text(page, '#amount')).toBe(`${usdt.toFixed(6)} USDT`);

      // Half in USDT, bound from another device: the bind selects USDT, one option is left (read whole once).
      const half = usdt.dividedBy(2).toDecimalPlaces(6, Decimal.ROUND_UP);
      const first = await chain.pay(shop.wallet, 'USDT', half.toFixed(6), { from: 7 });
      const bound = await postBind(node.kassa, session.session_id, {
        tx_hash: first.hash,
        chain_id: '31337',
        crypto_currency: 'USDT',
      });
      expect(bound.status, bound.text).toBe(200);
      await expect.poll(() => page.locator('#assets input').count(), { timeout: 12_000, interval: 100 }).toBe(1);
      const selectedReads = wholeReads();
      expect(selectedReads).toBe(1);
      expect(await text(page, '#amount')).toBe(`${usdt.toFixed(6)} USDT`);

      // Confirmed: partial. The one option is the same network and asset with another amount, the rest: read whole
      // again, and the amount, the QR code and the wallet link all ask for the rest.
      await node.watchers.tick();
      await confirm();
      await page.locator('#status', { hasText: 'Partially paid' }).waitFor({ timeout: 12_000 });
      expect(wholeReads()).toBe(selectedReads + 1);
      await expectAsksForUsdt(page, session, usdt.minus(half));

      // Nothing changes again: two more polls (a whole read the first began has ended by the second), none whole.
      const pollsThen = polls();
      await expect.poll(polls, { timeout: 12_000, interval: 100 }).toBeGreaterThanOrEqual(pollsThen + 2);
      expect(wholeReads()).toBe(selectedReads + 1);
      expect(pageProblems.get(page), pageProblems.get(page)!.join('\n')).toEqual([]);
      await page.close();
    },
  );

  it.each([
    // A server of another release: every document id is one it does not know (400 PERSISTED_QUERY_NOT_FOUND).
    ['another release, mid-deploy', (url: URL) => url.searchParams.set('documentId', '0000000000000000')],
    // A server of a release before trusted documents: it ignores the id, and Apollo refuses a GET with no preflight
    // header as a possible CSRF (400 BAD_REQUEST).
    ['a release that knows no ids', (url: URL) => url.searchParams.delete('documentId')],
  ])('sends the text when the server does not know its document ids (%s), and works on', async (_name, asServer) => {
    const session = await createSession(node.kassa, shop, checkoutRequest());
    const page = await newPage();
    await page.routeWebSocket(/\/graphql$/, (socket) => socket.close());
    await page.route(/\/graphql\?/, (route) => {
      const url = new URL(route.request().url());
      if (url.searchParams.has('documentId')) asServer(url);
      return route.continue({ url: url.toString() });
    });
    const answers: Array<[string, number]> = [];
    page.on('response', (response) => {
      const url = new URL(response.url());
      if (url.pathname === '/graphql') answers.push([[...url.searchParams.keys()].join(','), response.status()]);
    });
    await page.goto(openAt(session));
    await page.locator('#live-state[data-live="polling"]').waitFor();
    expect(await text(page, '#status')).toBe('Waiting for payment');
    expect(answers[0]![1]).toBe(400);
    expect(answers[1]).toEqual(['query,variables', 200]);
    await page.close();
  });
});
