/**
 * A usage example of @kassa/client that must compile under `strict`
 * (test/e2e/typescript-client.test.ts runs tsc on it): every field of the
 * public view, the merchant view, the bind result and events is typed.
 */
import {
  KassaClient,
  KassaError,
  KassaNetworkError,
  type BindResult,
  type CheckoutStatus,
  type CryptoTicker,
  type KassaEvent,
  type MerchantSession,
  type PublicSession,
  type Refund,
} from '../src/index.js';

export async function example(client: KassaClient): Promise<void> {
  const created: MerchantSession = await client.createCheckoutSession(
    {
      user: { id: 'customer-42', email: 'payer@example.com' },
      items: [{ name: 'Coffee', quantity: 2, unit_price: 12.5 }],
      currency: 'USD',
      expires_in_minutes: 30,
    },
    { idempotencyKey: 'order-42' },
  );
  const checkoutUrl: string = created.checkout_url;
  const organisationName: string | null = created.organisation_name;
  const deleted: boolean = created.organisation_deleted;
  const owner: string | null = created.owner_user_id;
  const quantity: number = created.items[0]!.quantity;
  const totalPrice: string = created.items[0]!.total_price;
  const productId: string | null = created.items[0]!.product_id;
  const createdAt: string = created.created_at;

  const session: PublicSession = await client.getCheckoutSession(created.session_id);
  const telegramId: string | null = session.user.telegram_id;
  const email: string | null = session.user.email;
  const username: string | null = session.user.username;
  const userId: string = session.user.id;
  const status: CheckoutStatus = session.status;
  const source: string = session.source;
  const flags: boolean[] = [
    session.from_payment_link,
    session.anonymous,
    session.requires_payer_identity,
    session.overpaid,
  ];
  const identityOptions: string[] = session.identity_options;
  const link: string | null = session.product_payment_link_id;
  const payer: string | null = session.payer_wallet_address;
  const selected: CryptoTicker | null = session.crypto_currency;
  const due: string | null = session.total_amount_crypto;
  const eth = session.crypto_options.find((option) => option.ticker === 'ETH');
  const ethAmount: string | undefined = eth?.amount;
  // @ts-expect-error: the views have no catch-all index signature; an unknown field does not compile.
  void session.not_a_field;
  // @ts-expect-error: metadata is in the merchant view only.
  void session.metadata;

  const bound: BindResult = await client.bindTransaction(created.session_id, {
    tx_hash: `0x${'ab'.repeat(32)}`,
    chain_id: '1',
    crypto_currency: 'ETH',
  });
  const boundTx: string = bound.bound_tx_hash;
  const boundTicker: CryptoTicker = bound.crypto_currency;
  const boundAmount: string = bound.total_amount_crypto;
  const boundStatus: CheckoutStatus = bound.status;
  const replay: boolean = bound.idempotent;

  for await (const event of client.events({ pageSize: 50 })) {
    const typed: KassaEvent = event;
    // `type` tells what `data` is: a session's view, a refund, or what a collect moved from deposit addresses.
    if (typed.type === 'funds.collected') {
      const moved: string[] = typed.data.collected.map((item) => `${item.amount} ${item.crypto_currency}`);
      void moved;
      continue;
    }
    if (typed.type.startsWith('refund.')) {
      const refund = typed.data as Refund;
      const returned: string = `${refund.amount} ${refund.crypto_currency} (${refund.status})`;
      void returned;
      continue;
    }
    if (!('user' in typed.data)) continue;
    const paidTelegram: string | null = typed.data.user.telegram_id;
    const items: number = typed.data.items.length;
    void [paidTelegram, items];
  }

  try {
    await client.getCheckoutSession('00000000-0000-4000-8000-000000000000');
  } catch (error) {
    if (error instanceof KassaNetworkError) {
      const zero: number = error.status; // 0: no HTTP answer
      void [zero, error.cause, error.url];
    } else if (error instanceof KassaError) {
      const problems: string[] = error.messages;
      void problems;
    }
  }

  void [
    checkoutUrl,
    organisationName,
    deleted,
    owner,
    quantity,
    totalPrice,
    productId,
    createdAt,
    telegramId,
    email,
    username,
    userId,
    status,
    source,
    flags,
    identityOptions,
    link,
    payer,
    selected,
    due,
    ethAmount,
    boundTx,
    boundTicker,
    boundAmount,
    boundStatus,
    replay,
  ];
}
