import { unavailable } from './errors.js';
import { isSealedUnderCurrentKey, keyId, openSecret, sealSecret, type MasterKeys, type StoredSecret } from './secret-box.js';

/** Every stored secret, for re-sealing (implemented in src/db/stored-secrets.ts). */
export interface StoredSecretsPort {
  /**
   * In one transaction, with every secret-holding row locked: hands `reseal` all stored secrets
   * and writes back the ones it returns new text for. When `reseal` throws, nothing is written.
   */
  resealAll(reseal: (secrets: readonly StoredSecret[]) => Map<StoredSecret, string>): Promise<readonly StoredSecret[]>;
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
}

/**
 * `kassa keys rotate-master`: re-seals every stored secret that is not yet v2 under the current
 * master key (opened with the current or a previous key), in one transaction, so a secret that
 * does not open stops it with nothing written. Running it again re-seals nothing.
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
  return { keyId: keyId(keys.current), apiKeySecrets: count('api_keys'), webhookSecrets: count('webhook_endpoints') };
}
