import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/shared/money.js';
import { startChainKassa, startTestChain, type ChainKassa, type TestChain } from '../support/chain.js';
import { hasStackTrace, parseJsonOutput, runKassaInProcess as kassa } from '../support/cli-process.js';
import { paidSession, randomWallet, refundRows } from '../support/refunds.js';
import { signedRequest } from '../support/webhooks.js';

/**
 * `kassa refunds create|list|show|cancel` (docs/api/refunds.md#cli) on the database of a Kassa whose sessions were
 * paid on anvil: the same answers as REST, and refusals with their exit codes, writing nothing.
 */

let chain: TestChain;
let node: ChainKassa;
let env: Record<string, string>;

beforeAll(async () => {
  chain = await startTestChain();
  node = await startChainKassa(chain.url);
  env = {
    KASSA_ENV: 'test',
    LOG_LEVEL: 'silent',
    KASSA_NETWORKS: 'local',
    KASSA_RPC_URLS_LOCAL: chain.url,
    DATABASE_URL: node.kassa.database.databaseUrl!,
    KASSA_DATA_DIR: node.kassa.database.dataDir,
    CHECKOUT_BASE_URL: 'https://pay.example.test',
  };
}, 60_000);

afterAll(async () => {
  await node?.close();
  await chain?.stop();
});

describe('kassa refunds', () => {
  it('creates through a claim link and to an address, lists, shows and cancels, as REST shows them', async () => {
    const paid = await paidSession(chain, node, 'USDT');
    const org = paid.merchant.organisationId;
    const claim = await kassa(
      ['refunds', 'create', '--org', org, '--session', paid.id, '--kind', 'part', '--amount', '2', '--json'],
      env,
    );
    expect(claim.code, claim.stderr).toBe(0);
    const claimed = parseJsonOutput<Record<string, any>>(claim);
    expect(claimed).toMatchObject({
      kind: 'part',
      status: 'awaiting_destination',
      amount: '2.00000000',
      crypto_currency: 'USDT',
      claim_url: `https://pay.example.test/r/${claimed.id}`,
    });
    const destination = randomWallet();
    const direct = await kassa(
      ['refunds', 'create', '--org', org, '--session', paid.id, '--kind', 'full', '--destination', destination],
      env,
    );
    expect(direct.code, direct.stderr).toBe(0);
    const rest = new Decimal(paid.sent).minus(2).toFixed(8);
    expect(direct.stdout).toMatch(
      new RegExp(`ready\\s+full\\s+${rest} USDT on local\\s+→ ${destination} \\(merchant\\)`),
    );

    const list = parseJsonOutput<Array<Record<string, any>>>(
      await kassa(['refunds', 'list', '--org', org, '--session', paid.id, '--json'], env),
    );
    const viaRest = await signedRequest(node.kassa, paid.merchant, 'get', `/checkout-sessions/${paid.id}/refunds`);
    expect(list).toEqual(viaRest.body.data);
    expect(list.map((refund) => refund.status)).toEqual(['awaiting_destination', 'ready']);

    const shown = parseJsonOutput(await kassa(['refunds', 'show', claimed.id, '--org', org, '--json'], env));
    expect(shown).toEqual(claimed);
    const cancelled = await kassa(['refunds', 'cancel', claimed.id, '--org', org], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(/cancelled/);
  });

  it('refuses bad input with its exit code and a one-line message, writing nothing', async () => {
    const paid = await paidSession(chain, node, 'USDT');
    const org = paid.merchant.organisationId;
    const before = await refundRows(node.kassa, org);
    const cases: Array<[string[], number, RegExp]> = [
      [['--session', paid.id, '--kind', 'part', '--amount', '100000'], 1, /would exceed/],
      [['--session', paid.id, '--kind', 'full', '--destination', '0x12'], 1, /destination must be an address/],
      [['--session', paid.id, '--kind', 'sideways'], 1, /kind must be one of full, excess, part/],
      [['--session', randomUUID(), '--kind', 'full'], 4, /not found/],
      [['--session', 'nope', '--kind', 'full'], 4, /not found/],
    ];
    for (const [args, code, message] of cases) {
      const run = await kassa(['refunds', 'create', '--org', org, ...args], env);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).not.toBe(0);
      expect(run.stderr).toMatch(message);
      expect(hasStackTrace(run.stderr)).toBe(false);
      if (code === 4) expect(run.code).toBe(4);
    }
    const unknown = await kassa(['refunds', 'show', randomUUID(), '--org', org], env);
    expect(unknown.code).toBe(4);
    expect(await refundRows(node.kassa, org)).toEqual(before);
  });
});
