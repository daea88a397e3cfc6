import { mkdirSync } from 'node:fs';
import express from 'express';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { settleExpiry } from '../../src/domain/get-checkout-session.js';
import { applySessionEvent } from '../../src/domain/session-events.js';
import { checkoutPageRouter } from '../../src/rest/checkout-page.routes.js';
import { Decimal } from '../../src/domain/money.js';
import { eip681Uri } from '../../src/domain/payment-uri.js';
import { checkoutRequest, txHash } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { BIND_MUTATION, postGraphql } from '../support/graphql-kassa.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * The hosted checkout page (`checkout_url`): over real HTTP on a real PostgreSQL,
 * then in a real browser (Debian's chromium) against the same server.
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
    expect(csp).toContain("connect-src 'self' ws: wss:");
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.text).toContain('<noscript>');
    expect(response.text).toContain('src="/pay/assets/pay.js"');
    // No inline code and nothing from another origin.
    expect(response.text).not.toMatch(/<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>/);
    expect(response.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    const data = JSON.parse(/<script type="application\/json" id="kassa-page-data">(.*?)<\/script>/.exec(response.text)![1]!);
    expect(data).toEqual({
      sessionId: session.session_id,
      wallets: { ethereum: merchant.wallet, bsc: merchant.wallet, local: merchant.wallet },
      developmentHints: false,
    });
  });

  it('serves its script and styles with the same policy', async () => {
    const script = await kassa.http.get('/pay/assets/pay.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.headers['content-security-policy']).toContain("default-src 'self'");
    const styles = await kassa.http.get('/pay/assets/pay.css');
    expect(styles.status).toBe(200);
    expect(styles.headers['content-type']).toMatch(/^text\/css/);
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
    const response = await kassa.http.post(`/pay/${session.session_id}`).set('Content-Type', 'application/json').send('{}');
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
      eip681Uri({ chainId: '1', walletAddress: merchant.wallet, contractAddress: USDT_ETHEREUM, decimals: 6, amount: new Decimal(usdt.amount) }),
    );
    const native = await kassa.http.get(`/pay/${session.session_id}/qr.svg?network=bsc&asset=BNB`);
    expect(native.status).toBe(200);
    expect(native.headers['x-payment-uri']).toMatch(new RegExp(`^ethereum:${merchant.wallet}@56\\?value=\\d+$`));
  });

  it('refuses a network or asset the session does not offer with 400', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const path = `/pay/${session.session_id}/qr.svg`;
    for (const query of ['', '?network=ethereum', '?asset=USDT', '?network=polygon&asset=USDT', '?network=ethereum&asset=DOGE', '?network=ethereum&asset=BNB', '?network=ethereum&network=bsc&asset=USDT']) {
      const response = await kassa.http.get(`${path}${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.statusCode, query).toBe(400);
    }
    expect((await kassa.http.get('/pay/nope/qr.svg?network=ethereum&asset=USDT')).status).toBe(400);
    expect((await kassa.http.get('/pay/0b0e2a61-3a57-4f3c-9d4e-9b2f6c1d2e3f/qr.svg?network=ethereum&asset=USDT')).status).toBe(404);
  });

  it('once an asset is locked by a bind, offers only that asset', async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const bound = await postGraphql(kassa, BIND_MUTATION, { sessionId: session.session_id, input: { txHash: txHash(9001), chainId: '56', cryptoCurrency: 'USDC' } });
    expect(bound.body.errors).toBeUndefined();
    expect((await kassa.http.get(`/pay/${session.session_id}/qr.svg?network=bsc&asset=USDC`)).status).toBe(200);
    expect((await kassa.http.get(`/pay/${session.session_id}/qr.svg?network=bsc&asset=USDT`)).status).toBe(400);
  });
});

describe('the checkout page in a real browser', () => {
  // Launched by the first test that needs it, so a missing chromium fails every browser test (a failing hook would count them as skipped).
  let browser: TestBrowser | undefined;
  async function newPage(): Promise<Page> {
    browser ??= await launchBrowser();
    return browser.context.newPage();
  }

  afterAll(async () => {
    await browser?.close();
  });

  async function confirmPayments(sessionId: string, received: string) {
    const ctx = kassa.ctx;
    await ctx.store.transaction(async (tx) => {
      const session = (await tx.lockSession(sessionId))!;
      // As settleSessionPayments does: the confirmed total is stored with the transition.
      await tx.updateSession(sessionId, { amountReceived: new Decimal(received), updatedAt: ctx.clock() });
      await applySessionEvent(
        ctx,
        tx,
        session,
        { kind: 'payments_confirmed', received: new Decimal(received), required: session.totalAmountCrypto!, tolerancePercent: new Decimal(0) },
        ctx.clock(),
      );
    });
  }

  const text = (page: Page, selector: string) => page.locator(selector).innerText();

  it('shows what to pay, binds the payer’s transaction and follows the session live to paid', { timeout: 40_000 }, async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const usdt = session.crypto_options.find((o: { ticker: string }) => o.ticker === 'USDT');
    const page = await newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    await page.goto(localUrl(session));

    // What is being paid for.
    await page.locator('#summary').waitFor();
    expect(await page.locator('#items tbody tr').count()).toBe(2);
    expect(await text(page, '#items tbody')).toContain('Coffee beans');
    expect(await text(page, '#items tbody')).toContain('Grinder');
    expect(await text(page, '#total-fiat')).toBe('105.00 USD');
    expect(await text(page, '#status')).toBe('Waiting for payment');
    expect(await text(page, '#countdown')).toMatch(/^(1:00:00|59:\d\d)$/);
    await page.locator('#live-state[data-live="socket"]').waitFor();

    // Choose USDT on Ethereum: amount, wallet, token contract, QR code.
    await page.locator('#assets label', { hasText: 'USDT' }).click();
    await page.locator('#networks label', { hasText: 'Ethereum' }).click();
    expect(await page.getByRole('radio', { name: /Ethereum/ }).isChecked()).toBe(true);
    await page.locator('#instructions').waitFor();
    expect(await text(page, '#amount')).toBe(`${usdt.amount} USDT`);
    expect(await text(page, '#wallet')).toBe(merchant.wallet);
    expect(await text(page, '#token-contract')).toBe(USDT_ETHEREUM);
    expect(await text(page, '#token-decimals')).toBe('6');
    // In the page (strings: the tests compile without the DOM library).
    await page.waitForFunction("document.getElementById('qr').complete && document.getElementById('qr').naturalWidth > 0");
    const qrSrc = await page.locator('#qr').getAttribute('src');
    expect(qrSrc).toBe(`/pay/${session.session_id}/qr.svg?network=ethereum&asset=USDT`);
    // The page's own BigInt arithmetic agrees with the server's payment URI.
    const uri = (await kassa.http.get(qrSrc!)).headers['x-payment-uri'];
    expect(await page.locator('#wallet-link').getAttribute('href')).toBe(uri);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL('checkout-page.png', ARTIFACTS).pathname, fullPage: true });

    // A malformed hash: the page shows GraphQL's message, which is REST's.
    await page.getByLabel('Transaction hash').fill('0x1234');
    await page.getByRole('button', { name: 'Confirm payment' }).click();
    const expected = await postGraphql(kassa, BIND_MUTATION, { sessionId: session.session_id, input: { txHash: '0x1234', chainId: '1', cryptoCurrency: 'USDT' } });
    await page.locator('#bind-error').waitFor();
    expect(await text(page, '#bind-error')).toBe(expected.body.errors[0].message);
    expect(await text(page, '#bind-error')).toContain('tx_hash must match');

    // A valid one is bound.
    const hash = txHash(424242);
    await page.getByLabel('Transaction hash').fill(hash);
    await page.getByLabel(/Your wallet address/).fill('0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc');
    await page.getByRole('button', { name: 'Confirm payment' }).click();
    await page.locator('#bound').waitFor();
    expect(await text(page, '#bound-hash')).toBe(hash);
    expect(await page.locator('#bind').isHidden()).toBe(true);
    const rest = await kassa.http.get(`/checkout-sessions/${session.session_id}`);
    expect(rest.body).toMatchObject({ bound_tx_hash: hash, crypto_currency: 'USDT', chain_id: '1' });
    await page.screenshot({ path: new URL('checkout-page-bound.png', ARTIFACTS).pathname, fullPage: true });

    // Payments confirmed from outside (as the chain watcher would): the page follows without a reload.
    const required = new Decimal(rest.body.total_amount_crypto);
    await confirmPayments(session.session_id, required.dividedBy(2).toFixed(8));
    await page.locator('#status', { hasText: 'Partially paid' }).waitFor({ timeout: 5_000 });
    expect(await text(page, '#outcome')).toMatch(/Partially paid/);
    const half = required.dividedBy(2).toFixed(8);
    const due = required.minus(half).toFixed(8);
    expect(await text(page, '#outcome-text')).toBe(`We received ${half} USDT of ${required.toFixed(8)}. Send the remaining ${due} USDT to the same address, from the same wallet.`);
    // What to send is now the rest, in the panel and in the wallet link.
    expect(await text(page, '#amount')).toBe(`${due} USDT`);
    await confirmPayments(session.session_id, required.toFixed(8));
    await page.locator('#status', { hasText: /^Paid$/ }).waitFor({ timeout: 5_000 });
    expect(await text(page, '#outcome-title')).toBe('Payment received');
    expect(await page.locator('#pay').isHidden()).toBe(true);
    expect(await page.locator('#live-state').getAttribute('data-live')).toBe('closed');
    await page.screenshot({ path: new URL('checkout-page-paid.png', ARTIFACTS).pathname, fullPage: true });
    expect(problems, problems.join('\n')).toEqual([]);
    await page.close();
  });

  it('fits a 360 px phone and shows a bind made elsewhere live', { timeout: 30_000 }, async () => {
    const session = await createSession(kassa, merchant, checkoutRequest({ items: [{ name: 'Annual subscription, team plan with priority support', quantity: 1, unit_price: 1234.5 }] }));
    const page = await newPage();
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto(localUrl(session));
    await page.locator('#live-state[data-live="socket"]').waitFor();
    await page.locator('#assets label', { hasText: 'ETH' }).click();
    await page.locator('#instructions').waitFor();
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBe(0);
    expect(await text(page, '#total-fiat')).toBe('1,234.50 USD');
    await page.screenshot({ path: new URL('checkout-page-360.png', ARTIFACTS).pathname, fullPage: true });

    const hash = txHash(515151);
    const bound = await kassa.http
      .post(`/checkout-sessions/${session.session_id}/bind-tx`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ tx_hash: hash, chain_id: '56', crypto_currency: 'BNB' }));
    expect(bound.status).toBe(200);
    await page.locator('#bound-hash', { hasText: hash }).waitFor({ timeout: 5_000 });
    // The asset and chain are now the bound ones: only BNB on BNB Smart Chain is offered.
    expect(await page.getByRole('radio').count()).toBe(2);
    expect(await text(page, '#network-name')).toBe('BNB Smart Chain (chain id 56)');
    await page.close();
  });

  it('falls back to polling when the WebSocket is refused, and shows expiry', { timeout: 30_000 }, async () => {
    const session = await createSession(kassa, merchant, checkoutRequest());
    const page = await newPage();
    // As behind a proxy that does not pass WebSockets.
    await page.routeWebSocket(/\/graphql$/, (socket) => socket.close());
    await page.goto(localUrl(session));
    await page.locator('#live-state[data-live="polling"]').waitFor();
    expect(await text(page, '#status')).toBe('Waiting for payment');

    await settleExpiry(kassa.ctx, session.session_id, new Date(Date.parse(session.expires_at) + 1000));
    await page.locator('#status', { hasText: 'Expired' }).waitFor({ timeout: 8_000 });
    expect(await text(page, '#outcome-title')).toBe('This checkout has expired');
    expect(await page.locator('#pay').isHidden()).toBe(true);
    expect(await page.locator('#bind').isHidden()).toBe(true);
    expect(await page.locator('#live-state').getAttribute('data-live')).toBe('closed');
    await page.close();
  });
});
