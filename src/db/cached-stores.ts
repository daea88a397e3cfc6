import type {
  ApiKeyRecord,
  ApiKeyStore,
  Organisation,
  OrganisationStore,
} from '../domain/organisations/organisation-ports.js';
import type { Branding, BrandingStore, StoredLogo } from '../domain/organisations/branding-ports.js';
import type { ChangeFeed } from './change-feed/change-feed.js';
import { ReadCache } from './sessions/read-cache.js';
import { RecentMisses } from './recent-misses.js';

/**
 * How long a cached API key or organisation is trusted without any announcement (the feed drops it at once on a
 * change).
 */
export const DIRECTORY_CACHE_TTL_MS = 60_000;
const DIRECTORY_CACHE_CAPACITY = 10_000;
/**
 * How long a public key found unknown is answered unknown without a lookup (a flood of made-up key ids costs no
 * round trips). Keys are random and shown only once made, so no one asks for one before it exists.
 */
export const UNKNOWN_KEY_MEMORY_MS = 60_000;

/**
 * API keys by public key, cached for authentication (docs/decisions/0010): a revoke, expiry or rotation on any instance
 * drops the key through the change feed, this instance's own at once on commit.
 */
export function cachedApiKeys(inner: ApiKeyStore, feed: ChangeFeed): ApiKeyStore {
  const cache = new ReadCache<ApiKeyRecord>({
    capacity: DIRECTORY_CACHE_CAPACITY,
    ttlMs: DIRECTORY_CACHE_TTL_MS,
    feed,
  });
  const unknown = new RecentMisses({ capacity: DIRECTORY_CACHE_CAPACITY, ttlMs: UNKNOWN_KEY_MEMORY_MS });
  const publicKeyOf = new Map<string, string>();
  feed.subscribe('kassa_api_key', (publicKey) => cache.invalidate(publicKey));
  feed.onReset(() => cache.clear());
  return {
    async create(input) {
      try {
        return await inner.create(input);
      } finally {
        unknown.forget(input.publicKey);
      }
    },
    findByPublicKey: (publicKey) =>
      unknown.read(publicKey, () =>
        cache.read(publicKey, async () => {
          const key = await inner.findByPublicKey(publicKey);
          if (key) publicKeyOf.set(key.id, key.publicKey);
          if (publicKeyOf.size > DIRECTORY_CACHE_CAPACITY) publicKeyOf.clear();
          return key;
        }),
      ),
    listForOrganisation: (organisationId) => inner.listForOrganisation(organisationId),
    async revoke(publicKey, at) {
      try {
        return await inner.revoke(publicKey, at);
      } finally {
        cache.invalidate(publicKey);
      }
    },
    async expire(publicKey, graceMinutes) {
      try {
        return await inner.expire(publicKey, graceMinutes);
      } finally {
        cache.invalidate(publicKey);
      }
    },
    async touch(id, at) {
      await inner.touch(id, at);
      // last_used_at is informational and announces nothing: keep the cached copy in step ourselves.
      const publicKey = publicKeyOf.get(id);
      if (publicKey) cache.update(publicKey, (key) => ({ ...key, lastUsedAt: at }));
    },
    sample: () => inner.sample(),
  };
}

/**
 * Organisations by id (name, payment policy, wallets), cached for create; any change of one or its wallets drops it
 * and, through `onChange`, every cached session showing it.
 */
export function cachedOrganisations(
  inner: OrganisationStore & BrandingStore,
  feed: ChangeFeed,
  onChange: (organisationId: string) => void,
): OrganisationStore & BrandingStore {
  const cache = new ReadCache<Organisation>({
    capacity: DIRECTORY_CACHE_CAPACITY,
    ttlMs: DIRECTORY_CACHE_TTL_MS,
    feed,
  });
  const changed = (organisationId: string) => {
    cache.invalidate(organisationId);
    onChange(organisationId);
  };
  feed.subscribe('kassa_organisation', changed);
  feed.onReset(() => cache.clear());
  const writing = async <T>(organisationId: string, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } finally {
      changed(organisationId);
    }
  };
  return {
    create: (input) => inner.create(input),
    findById: (id) => cache.read(id, () => inner.findById(id)),
    list: () => inner.list(),
    setWallet: (organisationId, network, address) =>
      writing(organisationId, () => inner.setWallet(organisationId, network, address)),
    walletOwner: (network, address) => inner.walletOwner(network, address),
    setPaymentPolicy: (organisationId, policy) =>
      writing(organisationId, () => inner.setPaymentPolicy(organisationId, policy)),
    brandingOf: (organisationId): Promise<Branding | null> => inner.brandingOf(organisationId),
    setBranding: (organisationId, change) => writing(organisationId, () => inner.setBranding(organisationId, change)),
    logoBySha256: (sha256): Promise<StoredLogo | null> => inner.logoBySha256(sha256),
  };
}
