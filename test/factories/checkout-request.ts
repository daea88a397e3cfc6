/** A valid CreateCheckoutRequest (docs/api/rest.md#create-rules-and-limits); override any part. */
export function checkoutRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    user: { id: 'customer-1', email: 'payer@example.com' },
    items: [
      { name: 'Coffee beans', quantity: 2, unit_price: 12.5 },
      { name: 'Grinder', quantity: 1, unit_price: 80 },
    ],
    currency: 'USD',
    ...overrides,
  };
}

export const VALID_TX_HASH = `0x${'ab'.repeat(32)}`;
export const txHash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
export const PAYER = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
