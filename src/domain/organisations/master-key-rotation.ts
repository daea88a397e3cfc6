import { unavailable } from '../shared/errors.js';
import {
  isSealedUnderCurrentKey,
  isV1Sealed,
  keyId,
  openSecret,
  sealSecret,
  type MasterKeys,
  type StoredSecret,
} from '../shared/secret-box.js';

/** Every stored secret, for re-sealing (implemented in src/db/stored-secrets.ts). */
export interface StoredSecretsPort {
  /**
   * In one transaction, with every secret-holding row locked: hands `reseal` all stored secrets
   * and writes back the ones it returns new text for. When `reseal` throws, nothing is written.
   */
  resealAll(reseal: (secrets: readonly StoredSecret[]) => Map<StoredSecret, string>): Promise<readonly StoredSecret[]>;
  /** How many stored secrets are in the v1 format (isV1Sealed). */
  countV1(): Promise<number>;
}

export interface ResealCounts {
  readonly resealed: number;
  readonly alreadyCurrent: number;
}

export interface MasterKeyRotation {
  /** The key id of the master key everything is sealed under now. */
  readonly keyId: string;
  readonly apiKeySecrets: ResealCounts;
  readonly webhookSecrets: ResealCounts;
  /** Of those re-sealed, how many were in the v1 format. */
  readonly v1Resealed: number;
  /** v1 secrets left afterwards (0: KASSA_SECRETS_V1=refuse may be set). */
  readonly v1Remaining: number;
}

/**
 * Re-seals every secret not yet v2 under the current master key in one transaction, so a secret that does not open
 * stops it with nothing written; running it again re-seals nothing.
 */
export async function rotateMasterKey(keys: MasterKeys, secrets: StoredSecretsPort): Promise<MasterKeyRotation> {
  let resealed = new Map<StoredSecret, string>();
  const all = await secrets.resealAll((stored) => {
    resealed = new Map();
    for (const secret of stored) {
      if (isSealedUnderCurrentKey(secret.sealed, keys)) continue;
      let plaintext: string;
      try {
        plaintext = openSecret(secret, keys);
      } catch (error) {
        throw unavailable(`Nothing was re-sealed: ${(error as Error).message}`);
      }
      resealed.set(secret, sealSecret(plaintext, keys, secret.row));
    }
    return resealed;
  });
  const count = (table: StoredSecret['row']['table']): ResealCounts => {
    const inTable = all.filter((secret) => secret.row.table === table);
    const changed = inTable.filter((secret) => resealed.has(secret)).length;
    return { resealed: changed, alreadyCurrent: inTable.length - changed };
  };
  const v1 = all.filter((secret) => isV1Sealed(secret.sealed));
  return {
    keyId: keyId(keys.current),
    apiKeySecrets: count('api_keys'),
    webhookSecrets: count('webhook_endpoints'),
    v1Resealed: v1.filter((secret) => resealed.has(secret)).length,
    v1Remaining: v1.filter((secret) => !resealed.has(secret)).length,
  };
}

/**
 * Start-up check with KASSA_SECRETS_V1=refuse: no stored secret may still be in the v1 format,
 * which would then fail at its first use; the message says how to re-seal them.
 */
export async function verifyNoV1Secrets(keys: MasterKeys, secrets: Pick<StoredSecretsPort, 'countV1'>): Promise<void> {
  if (!keys.refuseV1) return;
  const count = await secrets.countV1();
  if (count === 0) return;
  throw unavailable(
    `KASSA_SECRETS_V1=refuse, but ${count === 1 ? '1 stored secret is' : `${count} stored secrets are`} still in the ` +
      `v1 format (no key id, not bound to its row): ` +
      `re-seal ${count === 1 ? 'it' : 'them'} with \`kassa keys rotate-master\` under KASSA_SECRETS_V1=accept first`,
  );
}
