import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { createPublicClient, http, parseAbi, type Hex, type PublicClient } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDepositContracts } from '../../src/chain/sandbox.js';
import { checkoutRequest } from '../factories/checkout-request.js';
import { createMerchant, type TestMerchant } from '../factories/merchant.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { startTestChain, type TestChain } from '../support/chain.js';
import { dashboardMember, merchantGraphql, type DashboardMember } from '../support/dashboard-client.js';
import { startTestKassa, type TestKassa } from '../support/kassa.js';
import { createSession } from '../support/rest-kassa.js';

/**
 * The dashboard's deposits page (docs/dashboard.md#deposits-and-collecting) on a real anvil, PostgreSQL and Chromium:
 * an owner switches to deposit mode, two sessions are paid at their addresses, an admin collects through a browser
 * wallet that announces itself by EIP-6963 and sends to anvil; the collect goes pending → confirmed, the wallet's
 * balance rises and the collection is recorded per session. Viewers see no Collect; other organisations see nothing.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ERC20 = parseAbi(['function balanceOf(address owner) view returns (uint256)']);
/** Anvil's account 6: unlocked, so anvil signs its eth_sendTransaction, as a browser wallet would. */
const WALLET = '0x976ea74026e726554db657fa54763abd0c3a0aa9';

let chain: TestChain;
let bare: TestChain;
let kassa: TestKassa;
let bareKassa: TestKassa;
let client: PublicClient;
let usdt: Hex;
let shop: TestMerchant;
let other: TestMerchant;
let owner: DashboardMember;
let admin: DashboardMember;
let viewer: DashboardMember;
let otherOwner: DashboardMember;
let browser: TestBrowser | undefined;
const paid: Array<{ id: string; address: string }> = [];

beforeAll(async () => {
  chain = await startTestChain();
  await ensureDepositContracts(chain.url, chain.network);
  client = createPublicClient({ transport: http(chain.url) }) as PublicClient;
  usdt = chain.network.tokens.find((token) => token.ticker === 'USDT')!.address as Hex;
  kassa = await startTestKassa({ env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: chain.url } });
  shop = await createMerchant(kassa.ctx, { wallet: WALLET, name: 'Deposit Shop' });
  other = await createMerchant(kassa.ctx, { name: 'Other Shop' });
  owner = await dashboardMember(kassa, shop.organisationId, 'owner@deposit-shop.example', 'owner');
  admin = await dashboardMember(kassa, shop.organisationId, 'admin@deposit-shop.example', 'admin');
  viewer = await dashboardMember(kassa, shop.organisationId, 'viewer@deposit-shop.example', 'viewer');
  otherOwner = await dashboardMember(kassa, other.organisationId, 'owner@other-shop.example', 'owner');
  // A chain without the deposit factory, served by a second instance on the same database.
  bare = await startTestChain();
  bareKassa = await startTestKassa({
    database: kassa.database,
    env: { KASSA_NETWORKS: 'local', KASSA_RPC_URLS_LOCAL: bare.url },
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await bareKassa?.close();
  await kassa?.close();
  await bare?.stop();
  await chain?.stop();
});

const DEPOSITS = `query($org: ID!) { deposits(organisationId: $org) { receivingMode
  networks { network depositAddresses holdingAddresses transactions estimatedGas problem
    balances { asset amount baseUnits addresses } } } }`;
const SET_MODE = `mutation($org: ID!, $mode: String!) { setReceivingMode(organisationId: $org, mode: $mode) }`;
const PREPARE = `mutation($org: ID!) { prepareDepositCollect(organisationId: $org, network: "local") {
  to data value gas destination sessionIds } }`;
const REPORT = `mutation($org: ID!, $hash: String!) {
  reportDepositCollect(organisationId: $org, network: "local", txHash: $hash) { state collected { sessionId } } }`;

const tokenBalance = (owner: string) =>
  client.readContract({ address: usdt, abi: ERC20, functionName: 'balanceOf', args: [owner as Hex] });

describe('receiving mode', () => {
  it('an owner switches to deposit addresses; audited; admins and viewers may not', async () => {
    for (const member of [admin, viewer]) {
      const refused = await merchantGraphql(kassa, member, SET_MODE, { org: shop.organisationId, mode: 'deposit' });
      expect(refused.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    }
    const set = await merchantGraphql(kassa, owner, SET_MODE, { org: shop.organisationId, mode: 'deposit' });
    expect(set.errors).toBeUndefined();
    expect(set.data).toEqual({ setReceivingMode: 'deposit_addresses' });
    const audit = await kassa.ctx.store.dashboard.auditLog(shop.organisationId, 5);
    expect(audit[0]).toMatchObject({ action: 'organisation.receiving_mode_set' });
    expect(audit[0]!.details).toEqual({ receiving_mode: 'deposit_addresses' });
  });

  it('deposit mode is refused where the factory is not deployed, naming the command; the mode stays', async () => {
    await merchantGraphql(kassa, owner, SET_MODE, { org: shop.organisationId, mode: 'shared' });
    const refused = await merchantGraphql(bareKassa, owner, SET_MODE, { org: shop.organisationId, mode: 'deposit' });
    expect(refused.errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect(refused.errors?.[0]?.message).toContain('`kassa contracts deploy --network local`');
    expect((await kassa.ctx.store.organisations.findById(shop.organisationId))!.receivingMode).toBe('shared_wallet');
    const bad = await merchantGraphql(kassa, owner, SET_MODE, { org: shop.organisationId, mode: 'somewhere' });
    expect(bad.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    const again = await merchantGraphql(kassa, owner, SET_MODE, {
      org: shop.organisationId,
      mode: 'deposit_addresses',
    });
    expect(again.data).toEqual({ setReceivingMode: 'deposit_addresses' });
  });

  it('sessions keep the mode they were created with', async () => {
    for (const _ of [0, 1]) {
      const session = await createSession(kassa, shop, checkoutRequest());
      expect(session.wallet_address).not.toBe(WALLET);
      paid.push({ id: session.session_id, address: session.wallet_address });
    }
    expect(paid[1]!.address).not.toBe(paid[0]!.address);
    await merchantGraphql(kassa, owner, SET_MODE, { org: shop.organisationId, mode: 'shared' });
    expect((await createSession(kassa, shop, checkoutRequest())).wallet_address).toBe(WALLET);
  });
});

describe('balances and who may collect', () => {
  it('the balances waiting at deposit addresses are read on chain, per asset, with the gas to collect', async () => {
    await chain.pay(paid[0]!.address, 'USDT', '12.5');
    await chain.pay(paid[1]!.address, 'USDT', '3');
    await chain.pay(paid[1]!.address, 'ETH', '0.5', { gas: 21_000n });
    const answer = await merchantGraphql(kassa, viewer, DEPOSITS, { org: shop.organisationId });
    expect(answer.errors).toBeUndefined();
    const local = answer.data!.deposits.networks[0];
    // Switched to the shared wallet since: the deposit sessions keep their addresses.
    expect(answer.data!.deposits.receivingMode).toBe('shared_wallet');
    expect(local).toMatchObject({ network: 'local', depositAddresses: 2, holdingAddresses: 2, transactions: 1 });
    expect(Number(local.estimatedGas)).toBeGreaterThan(50_000);
    expect(local.balances).toEqual(
      expect.arrayContaining([
        { asset: 'USDT', amount: '15.50000000', baseUnits: '15500000', addresses: 2 },
        { asset: 'ETH', amount: '0.50000000', baseUnits: '500000000000000000', addresses: 1 },
      ]),
    );
  });

  it('a viewer may not build or report a collect; another organisation reaches none of it', async () => {
    for (const query of [PREPARE, REPORT]) {
      const refused = await merchantGraphql(kassa, viewer, query, {
        org: shop.organisationId,
        hash: `0x${'1'.repeat(64)}`,
      });
      expect(refused.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    }
    for (const query of [DEPOSITS, PREPARE, REPORT]) {
      const hidden = await merchantGraphql(kassa, otherOwner, query, {
        org: shop.organisationId,
        hash: `0x${'1'.repeat(64)}`,
      });
      expect(hidden.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    }
    const own = await merchantGraphql(kassa, otherOwner, DEPOSITS, { org: other.organisationId });
    expect(own.data!.deposits.networks[0]).toMatchObject({ depositAddresses: 0, holdingAddresses: 0, balances: [] });
    const prepared = await merchantGraphql(kassa, otherOwner, PREPARE, { org: other.organisationId });
    expect(prepared.data).toEqual({ prepareDepositCollect: [] });
  });

  it('an admin gets the unsigned collect: to the factory, no value, for the wallet only', async () => {
    const prepared = await merchantGraphql(kassa, admin, PREPARE, { org: shop.organisationId });
    expect(prepared.errors).toBeUndefined();
    const [tx] = prepared.data!.prepareDepositCollect;
    expect(tx).toMatchObject({ value: '0x0', destination: WALLET });
    expect(tx.gas).toMatch(/^0x[0-9a-f]+$/);
    expect([...tx.sessionIds].sort()).toEqual(paid.map((p) => p.id).sort());
    expect(tx.data).toContain(WALLET.slice(2));
  });
});

async function expectAxeClean(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => v.id + ': ' + JSON.stringify(v.nodes.map((n) => n.target))))`);
  expect(violations, `${label}: ${violations.join('\n')}`).toEqual([]);
}

/** An EIP-1193 wallet announced by EIP-6963 that starts on chain 1 and forwards calls to anvil through the test. */
function walletScript(account: string): string {
  return `(() => {
    let chainId = '0x1';
    const calls = (window.__walletCalls = []);
    const provider = {
      async request({ method, params }) {
        calls.push(method);
        if (method === 'eth_requestAccounts' || method === 'eth_accounts') return ['${account}'];
        if (method === 'eth_chainId') return chainId;
        if (method === 'wallet_switchEthereumChain') { chainId = params[0].chainId; return null; }
        return window.kassaAnvil(method, params || []);
      },
      on() {},
      removeListener() {},
    };
    const info = { uuid: '6f2c1d7e-0000-4000-8000-000000000001', name: 'Test wallet', icon: 'data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg"/>', rdns: 'test.kassa.wallet' };
    window.addEventListener('eip6963:requestProvider', () =>
      window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) })));
  })();`;
}

async function openAs(member: DashboardMember): Promise<{ page: Page; problems: string[] }> {
  browser ??= await launchBrowser();
  await browser.context.clearCookies();
  const [name, value] = member.cookie.split('=');
  await browser.context.addCookies([{ name: name!, value: value!, url: kassa.url }]);
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    if (new URL(request.url()).origin !== kassa.url) problems.push(`third-party: ${request.url()}`);
  });
  await page.exposeFunction('kassaAnvil', (method: string, params: unknown[]) => chain.rpc(method, params));
  await page.addInitScript(walletScript(WALLET));
  await page.goto(`${kassa.url}/dashboard/deposits?org=${shop.organisationId}`);
  return { page, problems };
}

describe('the deposits page in Chromium', () => {
  it('a viewer sees the balances and the mode, and no Collect button', { timeout: 60_000 }, async () => {
    const { page, problems } = await openAs(viewer);
    await expect.poll(() => page.locator('#results').innerText(), { timeout: 15_000 }).toContain('15.5 USDT');
    expect(await page.locator('#results').innerText()).toContain('2 of 2');
    expect(await page.locator('button', { hasText: 'Collect' }).count()).toBe(0);
    expect(await page.locator('#receiving-mode button').count()).toBe(0);
    expect(await page.isChecked('input[value=shared_wallet]')).toBe(true);
    await page.setViewportSize({ width: 360, height: 800 });
    await expectAxeClean(page, 'deposits as a viewer at 360 px');
    expect(problems).toEqual([]);
    await page.close();
  });

  it(
    'an admin collects through the browser wallet: pending, then confirmed and recorded',
    { timeout: 90_000 },
    async () => {
      const before = { usdt: await tokenBalance(WALLET), native: await client.getBalance({ address: WALLET }) };
      const { page, problems } = await openAs(admin);
      await page.setViewportSize({ width: 1280, height: 900 });
      const collect = page.locator('button', { hasText: 'Collect on local' });
      await collect.waitFor({ timeout: 15_000 });
      await expectAxeClean(page, 'deposits before collecting');

      // Mined only when the test says so: the page shows the collect pending first.
      await chain.rpc('evm_setAutomine', [false]);
      await collect.click();
      const state = page.locator('#collects [data-state]').first();
      try {
        await expect.poll(() => state.getAttribute('data-state'), { timeout: 15_000 }).toBe('pending');
      } finally {
        await chain.rpc('evm_setAutomine', [true]);
      }
      await chain.mine(1);
      await expect.poll(() => state.getAttribute('data-state'), { timeout: 15_000 }).toBe('confirmed');
      expect(await page.locator('#collects').innerText()).toContain('0.5 ETH, 15.5 USDT');
      await expect.poll(() => page.locator('#results').innerText(), { timeout: 15_000 }).toContain('0 of 2');
      const calls = await page.evaluate<string[]>('window.__walletCalls');
      expect(calls).toEqual(
        expect.arrayContaining([
          'eth_requestAccounts',
          'eth_chainId',
          'wallet_switchEthereumChain',
          'eth_sendTransaction',
        ]),
      );
      await expectAxeClean(page, 'deposits after collecting');
      // docs/dashboard.md's picture of the page, taken only when asked (as test/e2e/dashboard-screenshots.test.ts does).
      if (process.env.KASSA_SCREENSHOTS)
        await page.screenshot({
          path: new URL('../../docs/images/dashboard-deposits.png', import.meta.url).pathname,
          fullPage: true,
        });
      expect(problems).toEqual([]);
      await page.close();

      expect((await tokenBalance(WALLET)) - before.usdt).toBe(15_500_000n);
      // The wallet paid the gas and received 0.5 ETH.
      expect(await client.getBalance({ address: WALLET })).toBeGreaterThan(before.native);
      const items = await kassa.runtime.db.prisma.$queryRaw<
        Array<{ session_id: string; asset: string; amount: string }>
      >`
      SELECT i.session_id::text, i.asset, i.amount::text
        FROM deposit_collection_items i JOIN deposit_collections c ON c.id = i.collection_id
       WHERE c.organisation_id = ${shop.organisationId}::uuid ORDER BY i.session_id, i.asset`;
      expect(items.map((item) => `${item.session_id} ${item.asset} ${Number(item.amount)}`).sort()).toEqual(
        [`${paid[0]!.id} USDT 12.5`, `${paid[1]!.id} USDT 3`, `${paid[1]!.id} ETH 0.5`].sort(),
      );
      const events = await kassa.runtime.db.prisma.$queryRaw<Array<{ n: bigint }>>`
      SELECT count(*) AS n FROM outbox_events WHERE organisation_id = ${shop.organisationId}::uuid
         AND type = 'funds.collected'`;
      expect(Number(events[0]!.n)).toBe(1);
      const audit = await kassa.ctx.store.dashboard.auditLog(shop.organisationId, 5);
      expect(audit.map((entry) => entry.action)).toContain('deposits.collect_sent');
    },
  );

  it('reporting the collect again, or under another organisation, records nothing more', async () => {
    const sent = await kassa.runtime.db.prisma.$queryRaw<Array<{ tx_hash: string }>>`
      SELECT tx_hash FROM deposit_collections WHERE organisation_id = ${shop.organisationId}::uuid`;
    const hash = sent[0]!.tx_hash;
    const again = await merchantGraphql(kassa, admin, REPORT, { org: shop.organisationId, hash });
    expect(again.data!.reportDepositCollect.state).toBe('confirmed');
    const foreign = await merchantGraphql(kassa, otherOwner, REPORT, { org: other.organisationId, hash });
    expect(foreign.data!.reportDepositCollect).toEqual({ state: 'nothing', collected: [] });
    const rows = await kassa.runtime.db.prisma.$queryRaw<Array<{ n: bigint }>>`
      SELECT count(*) AS n FROM deposit_collections`;
    expect(Number(rows[0]!.n)).toBe(1);
  });

  it('a reported collect is followed and recorded by Kassa on its own once mined', { timeout: 60_000 }, async () => {
    await chain.pay(paid[0]!.address, 'USDT', '1');
    const prepared = await merchantGraphql(kassa, admin, PREPARE, { org: shop.organisationId });
    const [tx] = prepared.data!.prepareDepositCollect;
    await chain.rpc('evm_setAutomine', [false]);
    let hash: string;
    try {
      hash = await chain.rpc<string>('eth_sendTransaction', [{ from: WALLET, to: tx.to, data: tx.data, gas: tx.gas }]);
      const reported = await merchantGraphql(kassa, admin, REPORT, { org: shop.organisationId, hash });
      expect(reported.data!.reportDepositCollect).toEqual({ state: 'pending', collected: [] });
    } finally {
      await chain.rpc('evm_setAutomine', [true]);
    }
    await chain.mine(1);
    // Nobody reads it: the instance it was reported to records it.
    const recorded = () => kassa.runtime.db.prisma.$queryRaw<Array<{ asset: string; amount: string }>>`
      SELECT i.asset, i.amount::text FROM deposit_collection_items i
        JOIN deposit_collections c ON c.id = i.collection_id WHERE c.tx_hash = ${hash}`;
    await expect.poll(recorded, { timeout: 20_000, interval: 250 }).toHaveLength(1);
    expect(Number((await recorded())[0]!.amount)).toBe(1);
  });
});
