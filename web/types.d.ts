// The shapes the hosted pages read: the page data the server writes and the GraphQL answers
// (src/graphql/page-documents.ts). Types only: the browser never loads this file.

export type Texts = Readonly<Record<string, string>>;

/** What both pages are given. */
export interface CommonPageData {
  readonly lang?: string;
  readonly messages?: Texts;
  /** The merchant's colour and the text colour readable on it. */
  readonly brand?: { readonly color: string; readonly ink: string } | null;
}

export interface PageDocument {
  readonly id: string;
  readonly text: string;
}

export type PageDocumentName =
  'CheckoutPage' | 'CheckoutSession' | 'CheckoutPoll' | 'CheckoutUpdates' | 'BindTransaction';

/** EIP-3085 parameters of a chain a wallet may not know (the development sandbox). */
export interface AddChainParameter {
  readonly chainId: string;
  readonly chainName: string;
  readonly nativeCurrency: { readonly name: string; readonly symbol: string; readonly decimals: number };
  readonly rpcUrls: readonly string[];
}

/** The checkout page's data (/pay/<id>). */
export interface PayPageData extends CommonPageData {
  readonly sessionId: string;
  readonly developmentHints: boolean;
  /** The session receives at a deposit address of its own: no bind form, "send to this address". */
  readonly depositAddress: boolean;
  readonly addChain?: Readonly<Record<string, AddChainParameter>>;
  readonly documents: Readonly<Record<PageDocumentName, PageDocument>>;
}

export type SessionStatus = 'PENDING' | 'WAITING_PAYMENT' | 'PARTIAL' | 'PAID' | 'EXPIRED' | 'FAILED';

/** Exactly what to send on one network in one asset, as the server computed it. */
export interface PaymentOption {
  readonly network: string;
  readonly chainId: number;
  readonly ticker: string;
  readonly native: boolean;
  readonly contractAddress: string | null;
  readonly decimals: number;
  readonly walletAddress: string;
  readonly amount: string;
  readonly baseUnits: string;
  readonly uri: string;
}

export interface BoundTransaction {
  readonly txHash: string;
  readonly chainId: number;
  readonly cryptoCurrency: string | null;
  readonly state: string;
  readonly reason: string | null;
}

export interface Item {
  readonly name: string;
  readonly quantity: number;
  readonly unitPrice: string;
  readonly totalPrice: string;
}

/** A checkout session as the page's documents read it (amounts are exact decimal strings). */
export interface Session {
  readonly sessionId: string;
  readonly status: SessionStatus;
  readonly cryptoCurrency: string | null;
  readonly totalAmountCrypto: string | null;
  readonly amountReceived: string;
  readonly amountDue: string;
  readonly amountPending: string;
  readonly paymentDetected: boolean;
  readonly pendingCoversDue: boolean;
  readonly fiatCurrency: string;
  readonly totalAmountFiat: string;
  readonly secondsUntilExpiry: number;
  readonly boundTxHash: string | null;
  readonly chainId: number | null;
  readonly paymentOptions: readonly PaymentOption[];
  readonly transactions: readonly BoundTransaction[];
  readonly items: readonly Item[];
  readonly expiresAt: string;
}

/** What CheckoutPoll reads: only what can change while the page is open. */
export type PolledSession = Omit<
  Session,
  'paymentOptions' | 'sessionId' | 'fiatCurrency' | 'totalAmountFiat' | 'items' | 'expiresAt'
> & {
  readonly paymentOptions: readonly Pick<PaymentOption, 'network' | 'ticker' | 'amount'>[];
};

export interface Network {
  readonly slug: string;
  readonly name: string;
  readonly chainId: number;
  readonly confirmations: number;
}

/** The payer's choice: an asset on a network, with the option the server computed for it. */
export interface ChosenOption {
  readonly option: PaymentOption;
  readonly network: Network;
}

/** What bindTransaction answers. */
export interface BindResult {
  readonly boundTxHash: string;
  readonly cryptoCurrency: string;
  readonly totalAmountCrypto: string | null;
  readonly status: SessionStatus;
}

/** The asset and chain a payment was sent in. */
export interface Paid {
  readonly ticker: string;
  readonly chainId: number;
}

/** The payment link page's data (/l/<id>). */
export interface LinkPageData extends CommonPageData {
  readonly link: PaymentLink;
}

export type IdentityOption = 'email' | 'telegram' | 'username';

export interface PaymentLink {
  readonly id: string;
  readonly name: string;
  readonly currency: string;
  readonly items: readonly Item[];
  readonly totalAmountFiat: string | null;
  readonly amountMin: string | null;
  readonly amountMax: string | null;
  readonly identityOptions: readonly IdentityOption[];
  readonly requiresPayerIdentity: boolean;
}
