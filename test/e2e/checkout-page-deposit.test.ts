import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureDepositContracts } from '../../src/chain/sandbox.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * The hosted checkout page of a deposit-mode session (docs/payment-rules.md#deposit-mode) in a real browser: it says
 * "send to this address" and asks for no transaction hash, in English and German; a shared-wallet session's page keeps
 * its bind form. Paid by a real transfer on anvil, followed live.
 */

let browser: TestBrowser | undefined;
let chain: TestChain;
let node: ChainKassa;
let depositShop: TestMerchant;
let sharedShop: TestMerchant;

const randomWallet = () => `0x${randomBytes(20).toString('hex')}`;

beforeAll(async () => {
  chain = await startTestChain();
  await ensureDepositContracts(chain.url, chain.network);
  node = await startChainKassa(chain.url, { env: { KASSA_CONFIRMATIONS_LOCAL: '1' } });
  depositShop = await createMerchant(node.kassa.ctx, { wallet: randomWallet(), receiving: 'deposit' });
  sharedShop = await createMerchant(node.kassa.ctx, { wallet: randomWallet(), receiving: 'shared' });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await node?.close();
  await chain?.stop();
});

/** Opens the session's page in `lang` and chooses USDT on the sandbox; returns the page once it shows where to pay. */
async function openChoosingUsdt(session: Record<string, any>, lang: 'en' | 'de'): Promise<Page> {
  browser ??= await launchBrowser();
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${node.kassa.url}/pay/${session.session_id}?lang=${lang}`);
  await page.locator('#assets label', { hasText: 'USDT' }).click();
  await page.locator('#instructions').waitFor();
  expect(problems).toEqual([]);
  return page;
}

const WORDS = {
  en: { label: 'Send to this address', hint: "This address is this checkout's own", paid: 'Paid' },
  de: { label: 'An diese Adresse senden', hint: 'Diese Adresse gehört nur zu diesem Checkout', paid: 'Bezahlt' },
} as const;

describe('the checkout page of a deposit-mode session', { timeout: 60_000 }, () => {
  for (const lang of ['en', 'de'] as const) {
    it(`(${lang}) says to send to its own address and has no bind form; paid, it says so`, async () => {
      const session = await createSession(node.kassa, depositShop, checkoutRequest());
      const page = await openChoosingUsdt(session, lang);
      expect(await page.locator('#wallet').innerText()).toBe(session.wallet_address);
      expect(await page.locator('#address-label').innerText()).toBe(WORDS[lang].label);
      expect(await page.locator('#deposit-hint').isVisible()).toBe(true);
      expect(await page.locator('#deposit-hint').innerText()).toContain(WORDS[lang].hint);
      expect(await page.locator('#bind').isVisible()).toBe(false);
      expect(await page.locator('#bind-form').isVisible()).toBe(false);

      const usdt = session.crypto_options.find((o: { ticker: string }) => o.ticker === 'USDT').amount;
      await chain.pay(session.wallet_address, 'USDT', usdt, { from: 5 });
      await chain.mine(1);
      await node.watchers.tick();
      await node.watchers.tick();
      await page.locator('#status', { hasText: WORDS[lang].paid }).waitFor({ timeout: 20_000 });
      await page.close();
    });
  }

  it('a shared-wallet session keeps its bind form and the plain address label', async () => {
    const session = await createSession(node.kassa, sharedShop, checkoutRequest());
    const page = await openChoosingUsdt(session, 'en');
    await page.locator('#bind-form').waitFor();
    expect(await page.locator('#bind').isVisible()).toBe(true);
    expect(await page.locator('#address-label').innerText()).toBe('To address');
    expect(await page.locator('#deposit-hint').isVisible()).toBe(false);
    await page.close();
  });
});
