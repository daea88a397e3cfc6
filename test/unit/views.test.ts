import { describe, expect, it } from 'vitest';
import { receivingWallet, type CheckoutSession } from '../../src/domain/sessions/checkout-session.js';
import {
  merchantSessionViewSchema,
  publicSessionViewSchema,
  toMerchantView,
  toPublicView,
} from '../../src/domain/sessions/checkout-session.views.js';
import { Decimal } from '../../src/domain/shared/money.js';
import { MERCHANT_ONLY_FIELDS, PUBLIC_FIELDS } from '../support/spec-fields.js';

// docs/api/rest.md#the-public-view and #the-merchant-view.
const PUBLIC_KEYS: string[] = [...PUBLIC_FIELDS];
const MERCHANT_EXTRA_KEYS: string[] = [...MERCHANT_ONLY_FIELDS];

const SESSION_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const ORG_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const OWNER_ID = '9b2d3c4e-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
const ETH_WALLET = '0x1111111111111111111111111111111111111111';
const BSC_WALLET = '0x2222222222222222222222222222222222222222';
const d = (text: string) => new Decimal(text);

function session(overrides: Partial<CheckoutSession> = {}): CheckoutSession {
  return {
    id: SESSION_ID,
    organisationId: ORG_ID,
    organisationName: 'Acme Coffee',
    organisationDeleted: false,
    ownerUserId: OWNER_ID,
    status: 'waiting_payment',
    source: 'api',
    fromPaymentLink: false,
    anonymous: false,
    requiresPayerIdentity: false,
    identityOptions: [],
    productPaymentLinkId: null,
    fiatCurrency: 'USD',
    totalAmountFiat: d('105'),
    cryptoCurrency: null,
    totalAmountCrypto: null,
    networks: [
      { network: 'ethereum', chainId: '1', walletAddress: ETH_WALLET },
      { network: 'bsc', chainId: '56', walletAddress: BSC_WALLET },
    ],
    quotes: [
      {
        ticker: 'BTC',
        assetId: 'bitcoin',
        unitPriceFiat: d('97250.12'),
        amount: d('0.0010797'),
        baseAmount: d('0.0010797'),
        amountStep: d('0.00000001'),
        offsetSteps: 0,
        rateSource: 'static',
        ratedAt: new Date('2025-01-15T12:00:00Z'),
        rounding: 'ceil 8',
      },
      {
        ticker: 'USDT',
        assetId: 'tether',
        unitPriceFiat: d('1.0002'),
        amount: d('104.97900420'),
        baseAmount: d('104.97900420'),
        amountStep: d('0.00000001'),
        offsetSteps: 0,
        rateSource: 'static',
        ratedAt: new Date('2025-01-15T12:00:00Z'),
        rounding: 'ceil 8',
      },
    ],
    items: [
      { name: 'Coffee beans', quantity: 2, unitPrice: d('12.5'), totalPrice: d('25'), productId: 'sku-1' },
      { name: 'Grinder', quantity: 1, unitPrice: d('80'), totalPrice: d('80'), productId: null },
    ],
    expiresAt: new Date('2025-01-15T13:00:00.000Z'),
    overpaid: false,
    boundTxHash: null,
    boundAt: null,
    boundTxCheckedAt: null,
    payerWalletAddress: null,
    chainId: null,
    failureReason: null,
    amountReceived: d('0'),
    amountReceivedLate: d('0'),
    restAmount: null,
    amountPending: d('0'),
    quotedAt: new Date('2025-01-15T12:00:00.000Z'),
    paymentPolicy: { underpaymentTolerancePercent: d('0'), latePaymentWindowMinutes: 1440 },
    user: { id: 'customer-1', email: 'payer@example.com', telegramId: null, username: null },
    metadata: { order: 'A-17', nested: { n: 1 } },
    createdAt: new Date('2025-01-15T12:00:00.000Z'),
    updatedAt: new Date('2025-01-15T12:00:00.000Z'),
    ...overrides,
  };
}

const BOUND = {
  status: 'partial' as const,
  cryptoCurrency: 'USDT' as const,
  totalAmountCrypto: d('104.979'),
  boundTxHash: `0x${'ab'.repeat(32)}`,
  boundAt: new Date('2025-01-15T12:10:00.000Z'),
  payerWalletAddress: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
  chainId: '56',
};

describe('toPublicView', () => {
  it('has exactly the fields of the public view (docs/api/rest.md#the-public-view)', () => {
    expect(Object.keys(toPublicView(session())).sort()).toEqual([...PUBLIC_KEYS].sort());
    expect(Object.keys(toPublicView(session()).user).sort()).toEqual(['email', 'id', 'telegram_id', 'username']);
    expect(Object.keys(toPublicView(session()).crypto_options[0]!).sort()).toEqual([
      'amount',
      'id',
      'ticker',
      'unit_price_fiat',
    ]);
  });

  it('renders an unbound session', () => {
    expect(toPublicView(session())).toEqual({
      session_id: SESSION_ID,
      status: 'waiting_payment',
      source: 'api',
      from_payment_link: false,
      anonymous: false,
      requires_payer_identity: false,
      identity_options: [],
      product_payment_link_id: null,
      total_amount_crypto: null,
      crypto_currency: null,
      crypto_options: [
        { ticker: 'BTC', id: 'bitcoin', unit_price_fiat: '97250.12000000', amount: '0.00107970' },
        { ticker: 'USDT', id: 'tether', unit_price_fiat: '1.00020000', amount: '104.97900420' },
      ],
      fiat_currency: 'USD',
      total_amount_fiat: '105.00000000',
      wallet_address: ETH_WALLET,
      supported_networks: ['ethereum', 'bsc'],
      expires_at: '2025-01-15T13:00:00.000Z',
      overpaid: false,
      bound_tx_hash: null,
      payer_wallet_address: null,
      chain_id: null,
      user: { id: 'customer-1', email: 'payer@example.com', telegram_id: null, username: null },
    });
  });

  it('renders a bound session: the locked asset, its amount, and the wallet on the bound chain', () => {
    const view = toPublicView(session({ ...BOUND, overpaid: true }));
    expect(view).toMatchObject({
      status: 'partial',
      crypto_currency: 'USDT',
      total_amount_crypto: '104.97900000',
      bound_tx_hash: `0x${'ab'.repeat(32)}`,
      payer_wallet_address: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
      chain_id: '56',
      wallet_address: BSC_WALLET,
      overpaid: true,
    });
  });

  it('formats every amount with exactly 8 fractional digits and no exponent', () => {
    const view = toPublicView(
      session({
        totalAmountFiat: d('1e21'),
        totalAmountCrypto: d('1e-8'),
        cryptoCurrency: 'BTC',
        quotes: [{ ...session().quotes[0]!, unitPriceFiat: d('123456789012.12345678'), amount: d('0.00000001') }],
      }),
    );
    expect(view.total_amount_fiat).toBe('1000000000000000000000.00000000');
    expect(view.total_amount_crypto).toBe('0.00000001');
    expect(view.crypto_options).toEqual([
      { ticker: 'BTC', id: 'bitcoin', unit_price_fiat: '123456789012.12345678', amount: '0.00000001' },
    ]);
  });

  it('shows no organisation, owner, product, item or metadata data', () => {
    const text = JSON.stringify(
      toPublicView(session({ status: 'failed', failureReason: 'reverted at block 19000000' })),
    );
    for (const secret of [ORG_ID, OWNER_ID, 'Acme Coffee', 'sku-1', 'Coffee beans', 'A-17', 'reverted at block']) {
      expect(text).not.toContain(secret);
    }
  });

  it('copies arrays instead of sharing them with the session', () => {
    const s = session({ identityOptions: ['email'] });
    const view = toPublicView(s);
    view.identity_options.push('telegram');
    expect(s.identityOptions).toEqual(['email']);
  });

  it('renders the user with telegram id and username', () => {
    const view = toPublicView(session({ user: { id: 'u', email: null, telegramId: '42', username: 'ann' } }));
    expect(view.user).toEqual({ id: 'u', email: null, telegram_id: '42', username: 'ann' });
  });
});

describe('toMerchantView', () => {
  const BASE = 'https://pay.example.com';

  it('adds exactly the fields of the merchant view (docs/api/rest.md#the-merchant-view) to the public view', () => {
    const merchant = toMerchantView(session(), BASE);
    expect(Object.keys(merchant).sort()).toEqual([...PUBLIC_KEYS, ...MERCHANT_EXTRA_KEYS].sort());
    const publicPart = Object.fromEntries(Object.entries(merchant).filter(([key]) => PUBLIC_KEYS.includes(key)));
    expect(publicPart).toEqual(toPublicView(session()));
  });

  it('renders the merchant-only fields', () => {
    const merchant = toMerchantView(session(), BASE);
    expect(Object.fromEntries(MERCHANT_EXTRA_KEYS.map((key) => [key, merchant[key as keyof typeof merchant]]))).toEqual(
      {
        organisation_id: ORG_ID,
        organisation_name: 'Acme Coffee',
        organisation_deleted: false,
        owner_user_id: OWNER_ID,
        checkout_url: `https://pay.example.com/pay/${SESSION_ID}`,
        items: [
          {
            name: 'Coffee beans',
            quantity: 2,
            unit_price: '12.50000000',
            total_price: '25.00000000',
            product_id: 'sku-1',
          },
          { name: 'Grinder', quantity: 1, unit_price: '80.00000000', total_price: '80.00000000', product_id: null },
        ],
        metadata: { order: 'A-17', nested: { n: 1 } },
        created_at: '2025-01-15T12:00:00.000Z',
      },
    );
  });

  it('renders a deleted organisation without a name or owner', () => {
    const merchant = toMerchantView(
      session({ organisationName: null, organisationDeleted: true, ownerUserId: null, metadata: {} }),
      BASE,
    );
    expect(merchant).toMatchObject({
      organisation_name: null,
      organisation_deleted: true,
      owner_user_id: null,
      metadata: {},
    });
  });

  it('keeps the wallet of the bound chain in the merchant view too', () => {
    expect(toMerchantView(session(BOUND), BASE).wallet_address).toBe(BSC_WALLET);
  });
});

describe('wallet_address (receivingWallet)', () => {
  it.each([
    ['no chain bound → the first network', null, ETH_WALLET],
    ['bound on 1 → the Ethereum wallet', '1', ETH_WALLET],
    ['bound on 56 → the BSC wallet', '56', BSC_WALLET],
    ['bound on a chain the session does not have → the first network', '137', ETH_WALLET],
  ])('%s', (_name, chainId, expected) => {
    expect(receivingWallet(session({ chainId }))).toBe(expected);
    expect(toPublicView(session({ chainId })).wallet_address).toBe(expected);
  });

  it('follows the bound chain whatever the order of the networks', () => {
    const networks = [...session().networks].reverse();
    expect(receivingWallet({ networks, chainId: null })).toBe(BSC_WALLET);
    expect(receivingWallet({ networks, chainId: '1' })).toBe(ETH_WALLET);
  });

  it('is empty when the session has no network', () => {
    expect(receivingWallet({ networks: [], chainId: null })).toBe('');
    expect(receivingWallet({ networks: [], chainId: '56' })).toBe('');
  });
});

describe('the view schemas (the one source of the views, of OpenAPI and of the client types)', () => {
  it.each([
    ['an unbound session', session()],
    ['a bound session', session(BOUND)],
    ['a deleted organisation', session({ organisationName: null, organisationDeleted: true, ownerUserId: null })],
  ])('describe exactly what the views render for %s', (_what, value) => {
    expect(publicSessionViewSchema.parse(toPublicView(value))).toEqual(toPublicView(value));
    const merchantView = toMerchantView(value, 'https://pay.example.com');
    expect(merchantSessionViewSchema.parse(merchantView)).toEqual(merchantView);
  });

  it('refuse a field more, a field less and an amount that is not 8 decimals', () => {
    const view = toPublicView(session());
    expect(publicSessionViewSchema.safeParse({ ...view, extra: 1 }).success).toBe(false);
    const { overpaid: _gone, ...missing } = view;
    expect(publicSessionViewSchema.safeParse(missing).success).toBe(false);
    expect(publicSessionViewSchema.safeParse({ ...view, total_amount_fiat: '105' }).success).toBe(false);
  });
});
