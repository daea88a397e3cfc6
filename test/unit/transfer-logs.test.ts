import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRpc, isRangeTooLarge } from '../../src/chain/rpc.js';
import {
  addressTopic,
  decodeTransferLogs,
  tokenIndex,
  TRANSFER_TOPIC,
  type RawLog,
} from '../../src/chain/transfer-logs.js';
import { Decimal } from '../../src/domain/shared/money.js';
import type { Network } from '../../src/domain/shared/networks.js';

// The watcher's hand-written ERC-20 Transfer decoder, and how it recognises a
// provider refusing an eth_getLogs range.

// --- builders -------------------------------------------------------------------------------

/** config/networks.json `local` (anvil); token addresses checksummed as in the registry. */
const LOCAL: Network = {
  slug: 'local',
  name: 'Local (anvil)',
  chainId: 31337,
  nativeAsset: 'ETH',
  confirmations: 1,
  tokens: [
    { ticker: 'USDT', address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', decimals: 6 },
    { ticker: 'USDC', address: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512', decimals: 18 },
    { ticker: 'BTC', address: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0', decimals: 18 },
  ],
  rpcUrls: ['http://127.0.0.1:8545'],
};
const USDT_CHECKSUMMED = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const USDT = USDT_CHECKSUMMED.toLowerCase();
const USDC = '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512';
const UNKNOWN_TOKEN = '0xcafecafecafecafecafecafecafecafecafecafe';

const WALLET_CHECKSUMMED = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const WALLET = WALLET_CHECKSUMMED.toLowerCase();
const OTHER_WALLET = '0x90f79bf6eb2c4f870365e785982e1f101e93b906';
const PAYER_CHECKSUMMED = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const PAYER = PAYER_CHECKSUMMED.toLowerCase();
const STRANGER = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
const WALLETS: ReadonlySet<string> = new Set([WALLET, OTHER_WALLET]);

/** keccak256("Approval(address,address,uint256)"). */
const APPROVAL_TOPIC = '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925';

const TX_HASH = `0x${'AB'.repeat(32)}`;
const BLOCK_HASH = `0x${'Cd'.repeat(32)}`;

/** A checksummed address as an upper-case-hex topic, as some nodes print it. */
const upperTopic = (address: string) => `0x${address.replace(/^0x/, '').toUpperCase().padStart(64, '0')}`;
const uint256 = (value: bigint) => `0x${value.toString(16).padStart(64, '0')}`;

function log(overrides: Partial<RawLog> = {}): RawLog {
  return {
    address: USDT_CHECKSUMMED,
    topics: [TRANSFER_TOPIC, addressTopic(PAYER), addressTopic(WALLET)],
    data: uint256(1_234_567n),
    blockNumber: '0x1a2b',
    blockHash: BLOCK_HASH,
    transactionHash: TX_HASH,
    logIndex: '0x7',
    removed: false,
    ...overrides,
  };
}
const transferTo = (to: string, overrides: Partial<RawLog> = {}) =>
  log({ topics: [TRANSFER_TOPIC, addressTopic(PAYER), addressTopic(to)], ...overrides });

const BLOCK_TIME = new Date('2025-01-15T12:00:07.000Z');
const decode = (logs: readonly RawLog[], wallets: ReadonlySet<string> = WALLETS) =>
  decodeTransferLogs(logs, LOCAL, tokenIndex(LOCAL), wallets, new Map([[BLOCK_HASH.toLowerCase(), BLOCK_TIME]]));
/** The decoded transfers with their amounts as exact strings. */
const decodePlain = (logs: readonly RawLog[], wallets?: ReadonlySet<string>) =>
  decode(logs, wallets).map((t) => ({ ...t, amount: t.amount.toFixed() }));

// --- addressTopic / tokenIndex --------------------------------------------------------------

describe('addressTopic', () => {
  it.each([
    ['a checksummed address', WALLET_CHECKSUMMED],
    ['a lower-case address', WALLET],
    ['an address without 0x', WALLET_CHECKSUMMED.slice(2)],
  ])('left-pads %s to a lower-case 32-byte topic', (_name, address) => {
    expect(addressTopic(address)).toBe('0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8');
    expect(addressTopic(address)).toHaveLength(66);
  });

  it('pads the zero address to 32 zero bytes', () => {
    expect(addressTopic('0x0000000000000000000000000000000000000000')).toBe(`0x${'0'.repeat(64)}`);
  });
});

describe('tokenIndex', () => {
  it('indexes the network tokens by lower-case contract address', () => {
    expect([...tokenIndex(LOCAL)]).toEqual([
      [USDT, { ticker: 'USDT', decimals: 6 }],
      [USDC, { ticker: 'USDC', decimals: 18 }],
      ['0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0', { ticker: 'BTC', decimals: 18 }],
    ]);
  });
});

// --- decodeTransferLogs ---------------------------------------------------------------------

describe('decodeTransferLogs', () => {
  it('decodes a Transfer log to a watched wallet, lower-casing hashes and addresses', () => {
    const upperCase = log({ topics: [TRANSFER_TOPIC, upperTopic(PAYER_CHECKSUMMED), upperTopic(WALLET_CHECKSUMMED)] });
    expect(decodePlain([upperCase])).toEqual([
      {
        network: 'local',
        chainId: '31337',
        txHash: TX_HASH.toLowerCase(),
        logIndex: 7,
        from: PAYER,
        to: WALLET,
        asset: 'USDT',
        tokenAddress: USDT,
        baseUnits: 1_234_567n,
        amount: '1.234567',
        blockNumber: 6699n,
        blockHash: BLOCK_HASH.toLowerCase(),
        blockTime: BLOCK_TIME,
      },
    ]);
  });

  it('reads a large log index and block number from hex', () => {
    const [transfer] = decode([log({ logIndex: '0x1f4', blockNumber: '0x1406f40' })]);
    expect(transfer!.logIndex).toBe(500);
    expect(transfer!.blockNumber).toBe(21_000_000n);
  });

  it.each([
    ['1234567 base units of a 6-decimal token', USDT, 1_234_567n, 'USDT', '1.234567'],
    ['one whole 6-decimal token', USDT, 1_000_000n, 'USDT', '1'],
    ['1 base unit of a 6-decimal token', USDT, 1n, 'USDT', '0.000001'],
    ['1 wei of an 18-decimal token', USDC, 1n, 'USDC', '0.000000000000000001'],
    ['25.005 of an 18-decimal token', USDC, 25_005_000_000_000_000_000n, 'USDC', '25.005'],
    [
      'the largest uint256 of an 18-decimal token',
      USDC,
      2n ** 256n - 1n,
      'USDC',
      '115792089237316195423570985008687907853269984665640564039457.584007913129639935',
    ],
  ])('converts %s exactly', (_name, token, baseUnits, asset, amount) => {
    const [transfer] = decode([log({ address: token, data: uint256(baseUnits) })]);
    expect(transfer!.asset).toBe(asset);
    expect(transfer!.baseUnits).toBe(baseUnits);
    expect(transfer!.amount.toFixed()).toBe(amount);
    expect(transfer!.amount.equals(new Decimal(amount))).toBe(true);
  });

  it('accepts value data shorter than 32 bytes', () => {
    const [transfer] = decode([log({ data: '0x2a' })]);
    expect(transfer!.baseUnits).toBe(42n);
    expect(transfer!.amount.toFixed()).toBe('0.000042');
  });

  it.each<[string, RawLog]>([
    ['a removed log (reorganised away)', log({ removed: true })],
    [
      'an ERC-721 Transfer (token id as a fourth topic)',
      log({ topics: [TRANSFER_TOPIC, addressTopic(PAYER), addressTopic(WALLET), uint256(7n)], data: '0x' }),
    ],
    ['a log with only two topics', log({ topics: [TRANSFER_TOPIC, addressTopic(PAYER)] })],
    [
      'another event of the token (Approval)',
      log({ topics: [APPROVAL_TOPIC, addressTopic(PAYER), addressTopic(WALLET)] }),
    ],
    ['a Transfer of an unknown contract', log({ address: UNKNOWN_TOKEN })],
    ['a Transfer to an address that is not watched', transferTo(STRANGER)],
    [
      'a Transfer out of a watched wallet',
      log({ topics: [TRANSFER_TOPIC, addressTopic(WALLET), addressTopic(STRANGER)] }),
    ],
    ['a zero-value Transfer (address poisoning)', log({ data: uint256(0n) })],
    ['a Transfer with empty data', log({ data: '0x' })],
    ['a Transfer with data longer than 32 bytes', log({ data: `${uint256(1_234_567n)}00` })],
    ['a Transfer with two words of data', log({ data: `${uint256(1n)}${uint256(2n).slice(2)}` })],
  ])('skips %s', (_name, skipped) => {
    expect(decode([skipped])).toEqual([]);
    // and the same log beside a good one leaves just the good one
    expect(decode([skipped, log()]).map((t) => t.baseUnits)).toEqual([1_234_567n]);
  });

  it('keeps the good logs of a batch, in order, to every watched wallet', () => {
    const logs = [
      log({ logIndex: '0x0', data: uint256(1n) }),
      log({ logIndex: '0x1', removed: true }),
      transferTo(OTHER_WALLET, { logIndex: '0x2', address: USDC, data: uint256(2n) }),
      transferTo(STRANGER, { logIndex: '0x3' }),
      log({ logIndex: '0x4', address: UNKNOWN_TOKEN }),
      log({ logIndex: '0x5', data: uint256(3n), removed: undefined }),
    ];
    expect(decode(logs).map((t) => [t.logIndex, t.to, t.asset, t.baseUnits])).toEqual([
      [0, WALLET, 'USDT', 1n],
      [2, OTHER_WALLET, 'USDC', 2n],
      [5, WALLET, 'USDT', 3n],
    ]);
  });

  it('decodes nothing when no wallet is watched', () => {
    expect(decode([log()], new Set())).toEqual([]);
  });
});

// --- isRangeTooLarge ------------------------------------------------------------------------

describe('isRangeTooLarge', () => {
  it.each<[string, unknown]>([
    ["Infura's result cap", new Error('query returned more than 10000 results')],
    [
      "Alchemy's response size cap",
      new Error('Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range'),
    ],
    ["QuickNode's range cap", new Error('eth_getLogs is limited to a 10,000 range')],
    ["geth's block range cap", new Error('exceed maximum block range: 5000')],
    ['the limit-exceeded code alone', { code: -32005 }],
    ['the limit-exceeded code on an error', Object.assign(new Error('request failed'), { code: -32005 })],
    ['a wording in the error details', { message: 'RPC Request failed.', details: 'Log response size exceeded' }],
    [
      'a message nested in cause',
      new Error('RPC Request failed.', { cause: new Error('query returned more than 10000 results') }),
    ],
    [
      'a message nested three causes deep',
      new Error('a', {
        cause: new Error('b', { cause: new Error('c', { cause: new Error('exceed maximum block range: 5000') }) }),
      }),
    ],
  ])('is true for %s', (_name, error) => {
    expect(isRangeTooLarge(error)).toBe(true);
  });

  it.each<[string, unknown]>([
    ['execution reverted', new Error('execution reverted')],
    [
      'connection refused',
      new Error('connect ECONNREFUSED 127.0.0.1:8545', { cause: new Error('connection refused') }),
    ],
    ['an unrelated JSON-RPC code', Object.assign(new Error('header not found'), { code: -32000 })],
    ['no error at all', undefined],
    // Throttling: splitting the range would only send more requests.
    ['an HTTP 429', { message: 'HTTP request failed.', details: 'too many requests', status: 429 }],
    ["Infura's rate cap", new Error('project ID request rate exceeded')],
    ['a rate limit with the limit code', Object.assign(new Error('rate limit reached'), { code: -32005 })],
  ])('is false for %s', (_name, error) => {
    expect(isRangeTooLarge(error)).toBe(false);
  });
});

describe('isRangeTooLarge on errors as viem raises them', () => {
  // A JSON-RPC node that answers every request with the error it is told to.
  let reply: { code: number; message: string } = { code: -32000, message: 'unset' };
  let server: Server;
  let url: string;
  const filter = {
    fromBlock: 1n,
    toBlock: 100_000n,
    addresses: [USDT],
    topics: [TRANSFER_TOPIC, null, [addressTopic(WALLET)]],
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const { id } = JSON.parse(body) as { id: number };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, error: reply }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const refusal = async (rpc: ChainRpc) =>
    rpc.logs(filter).then(
      () => {
        throw new Error('eth_getLogs unexpectedly succeeded');
      },
      (error: unknown) => error,
    );

  it.each([
    [-32005, 'query returned more than 10000 results'],
    [-32602, 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range'],
    [-32000, 'exceed maximum block range: 5000'],
  ])('is true for a node refusing the range (%i %s)', async (code, message) => {
    reply = { code, message };
    expect(isRangeTooLarge(await refusal(new ChainRpc([url], 2_000)))).toBe(true);
  });

  it('is false for a reverted call', async () => {
    reply = { code: 3, message: 'execution reverted' };
    expect(isRangeTooLarge(await refusal(new ChainRpc([url], 2_000)))).toBe(false);
  });

  it('is false for a node that refuses the connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(isRangeTooLarge(await refusal(new ChainRpc([`http://127.0.0.1:${port}`], 2_000)))).toBe(false);
  });
});
