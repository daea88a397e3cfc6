import { randomUUID } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  type VerifiedAuthenticationResponse,
} from '@simplewebauthn/server';
import type { DomainContext } from '../context.js';
import { invalid, notFound, unauthorised } from '../shared/errors.js';
import { isUuid } from '../shared/uuid.js';
import type { DashboardWrites, PasskeyCeremony, PasskeyRecord } from './dashboard-ports.js';
import { auditSignIn, checkSignInThrottle, startSession, type Principal, type StartedSession } from './sign-in.js';

/**
 * Passkeys (WebAuthn) beside the password (docs/dashboard.md#passkeys): the relying party is Kassa's public address
 * (CHECKOUT_BASE_URL), challenges live in the database, are taken once and expire after PASSKEY_CHALLENGE_MINUTES.
 */
export const PASSKEY_CHALLENGE_MINUTES = 5;
export const MAX_PASSKEYS_PER_ACCOUNT = 10;
export const MAX_PASSKEY_NAME_LENGTH = 64;

/** What a person sees of a passkey (never its key). */
export interface PasskeySummary {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

const summary = (passkey: PasskeyRecord): PasskeySummary => ({
  id: passkey.id,
  name: passkey.name,
  createdAt: passkey.createdAt,
  lastUsedAt: passkey.lastUsedAt,
});

/** The relying party: the host of the public address is the RP ID, its origin the only origin accepted. */
export function relyingPartyOf(publicBaseUrl: string): { id: string; origin: string; name: string } {
  const url = new URL(publicBaseUrl);
  return { id: url.hostname, origin: url.origin, name: 'Kassa' };
}

async function newChallenge(
  ctx: DomainContext,
  challenge: string,
  ceremony: PasskeyCeremony,
  userId: string | null,
): Promise<void> {
  const expiresAt = new Date(ctx.clock().getTime() + PASSKEY_CHALLENGE_MINUTES * 60_000);
  await ctx.store.dashboard.insertPasskeyChallenge({ challenge, ceremony, userId, expiresAt });
}

/** A WebAuthn answer's outer shape, checked before anything is looked up: a malformed one is a 400. */
function credentialJson<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(value: unknown): T {
  const response = (value as { response?: Record<string, unknown> } | null)?.response;
  const fields = value as Record<string, unknown> | null;
  const base64url = (text: unknown) => typeof text === 'string' && /^[A-Za-z0-9_-]{1,4096}={0,2}$/.test(text);
  if (
    typeof value !== 'object' ||
    value === null ||
    !base64url(fields!.id) ||
    fields!.rawId !== fields!.id ||
    fields!.type !== 'public-key' ||
    typeof response !== 'object' ||
    response === null ||
    !base64url(response.clientDataJSON)
  )
    throw invalid(['credential must be a public-key credential as the browser returns it (JSON)']);
  return value as T;
}

/** The challenge the browser signed, read from its client data (checked again by the verification). */
function challengeOf(credential: RegistrationResponseJSON | AuthenticationResponseJSON): string {
  try {
    const clientData = JSON.parse(Buffer.from(credential.response.clientDataJSON, 'base64url').toString('utf8'));
    if (typeof clientData?.challenge === 'string') return clientData.challenge;
  } catch {
    // Answered below as any malformed credential.
  }
  throw invalid(['credential.response.clientDataJSON must be the JSON the browser wrote']);
}

async function auditPasskey(
  tx: DashboardWrites,
  ownerId: string,
  actorId: string | null,
  action: string,
  passkey: PasskeyRecord,
  address: string | null,
) {
  for (const membership of await tx.membershipsOf(ownerId))
    await tx.audit({
      organisationId: membership.organisationId,
      userId: actorId,
      action,
      details: { passkey_id: passkey.id, name: passkey.name, account_id: ownerId },
      address,
    });
}

/** Options for `navigator.credentials.create`: a discoverable passkey for the signed-in account. */
export async function passkeyRegistrationOptions(
  ctx: DomainContext,
  principal: Principal,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const rp = relyingPartyOf(ctx.checkoutBaseUrl);
  const existing = await ctx.store.dashboard.passkeysOf(principal.userId);
  if (existing.length >= MAX_PASSKEYS_PER_ACCOUNT)
    throw invalid([`an account has at most ${MAX_PASSKEYS_PER_ACCOUNT} passkeys: remove one first`]);
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: principal.email,
    userID: new TextEncoder().encode(principal.userId),
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({
      id: passkey.credentialId,
      transports: passkey.transports as AuthenticatorTransportFuture[],
    })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    timeout: PASSKEY_CHALLENGE_MINUTES * 60_000,
  });
  await newChallenge(ctx, options.challenge, 'register', principal.userId);
  return options;
}

/** Checks the browser's new credential against the account's challenge and keeps it; audited. */
export async function registerPasskey(
  ctx: DomainContext,
  principal: Principal,
  input: { name?: unknown; credential: unknown },
  address: string,
): Promise<PasskeySummary> {
  const name = typeof input.name === 'string' && input.name.trim() !== '' ? input.name.trim() : 'Passkey';
  if (name.length > MAX_PASSKEY_NAME_LENGTH)
    throw invalid([`name must be at most ${MAX_PASSKEY_NAME_LENGTH} characters`]);
  const credential = credentialJson<RegistrationResponseJSON>(input.credential);
  const challenge = challengeOf(credential);
  const rp = relyingPartyOf(ctx.checkoutBaseUrl);
  return ctx.store.dashboard.transaction(async (tx) => {
    const taken = await tx.takePasskeyChallenge(challenge, 'register', ctx.clock());
    if (!taken || taken.userId !== principal.userId)
      throw invalid(['the passkey challenge is not valid: it was used already, has expired or never existed']);
    let verification;
    try {
      verification = await verifyRegistrationResponse({
        response: credential,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        requireUserVerification: false,
      });
    } catch (error) {
      throw invalid([`the passkey was not accepted: ${(error as Error).message}`]);
    }
    if (!verification.verified) throw invalid(['the passkey was not accepted']);
    const { credential: made } = verification.registrationInfo;
    if (await tx.findPasskeyByCredentialId(made.id)) throw invalid(['this passkey is registered already']);
    const passkey = {
      id: randomUUID(),
      userId: principal.userId,
      credentialId: made.id,
      publicKey: made.publicKey,
      signCount: made.counter,
      transports: made.transports ?? [],
      name,
    };
    await tx.insertPasskey(passkey);
    const record = { ...passkey, createdAt: ctx.clock(), lastUsedAt: null };
    await auditPasskey(tx, principal.userId, principal.userId, 'user.passkey_added', record, address);
    return summary(record);
  });
}

export async function listPasskeys(ctx: DomainContext, userId: string): Promise<PasskeySummary[]> {
  return (await ctx.store.dashboard.passkeysOf(userId)).map(summary);
}

/** The signed-in person removes one of their own passkeys; another's is not found. Audited. */
export async function removeOwnPasskey(
  ctx: DomainContext,
  principal: Principal,
  passkeyId: string,
  address: string,
): Promise<void> {
  if (!isUuid(passkeyId)) throw notFound(`Passkey ${passkeyId} not found`);
  await ctx.store.dashboard.transaction(async (tx) => {
    const removed = await tx.deletePasskey(passkeyId.toLowerCase(), principal.userId);
    if (!removed) throw notFound(`Passkey ${passkeyId} not found`);
    await auditPasskey(tx, principal.userId, principal.userId, 'user.passkey_removed', removed, address);
  });
}

/** `kassa users passkeys`: the account's passkeys, by e-mail address or user id. */
export async function passkeysOfAccount(
  ctx: DomainContext,
  emailOrId: string,
): Promise<{ userId: string; email: string; passkeys: PasskeySummary[] }> {
  const store = ctx.store.dashboard;
  const user = isUuid(emailOrId)
    ? await store.findUserById(emailOrId.toLowerCase())
    : await store.findUserByEmail(emailOrId.trim().toLowerCase());
  if (!user) throw notFound(`Dashboard user ${emailOrId} not found`);
  return { userId: user.id, email: user.email, passkeys: await listPasskeys(ctx, user.id) };
}

/** `kassa users passkeys remove`: the operator removes a lost passkey; audited without a user. */
export async function removePasskeyAsOperator(ctx: DomainContext, passkeyId: string): Promise<PasskeySummary> {
  if (!isUuid(passkeyId)) throw notFound(`Passkey ${passkeyId} not found`);
  return ctx.store.dashboard.transaction(async (tx) => {
    const removed = await tx.deletePasskey(passkeyId.toLowerCase());
    if (!removed) throw notFound(`Passkey ${passkeyId} not found`);
    await auditPasskey(tx, removed.userId, null, 'user.passkey_removed', removed, null);
    return summary(removed);
  });
}

/** Options for `navigator.credentials.get`: any passkey of this relying party (the passkey names its account). */
export async function passkeySignInOptions(ctx: DomainContext): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const rp = relyingPartyOf(ctx.checkoutBaseUrl);
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'preferred',
    timeout: PASSKEY_CHALLENGE_MINUTES * 60_000,
  });
  await newChallenge(ctx, options.challenge, 'sign_in', null);
  return options;
}

const REFUSED = 'The passkey was not accepted: sign in with your password, or try again';

/**
 * Signs in with a passkey: throttled per address, and per account once the passkey names one, as password
 * sign-ins are; every refusal counts as a failed sign-in. A disabled account's passkey is refused.
 */
export async function signInWithPasskey(ctx: DomainContext, input: unknown, address: string): Promise<StartedSession> {
  const store = ctx.store.dashboard;
  await checkSignInThrottle(ctx, { address });
  const credential = credentialJson<AuthenticationResponseJSON>(input);
  const challenge = challengeOf(credential);
  const passkey = await store.findPasskeyByCredentialId(credential.id);
  const user = passkey && (await store.findUserById(passkey.userId));
  if (user) await checkSignInThrottle(ctx, { email: user.email });
  const refuse = async () => {
    await store.recordFailure(user?.email ?? '', address);
    return unauthorised(REFUSED);
  };
  const taken = await store.takePasskeyChallenge(challenge, 'sign_in', ctx.clock());
  if (!taken || !passkey || !user || user.disabledAt) throw await refuse();
  const rp = relyingPartyOf(ctx.checkoutBaseUrl);
  let verification: VerifiedAuthenticationResponse | null;
  try {
    verification = await verifyAuthenticationResponse({
      response: credential,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(passkey.publicKey),
        counter: passkey.signCount,
        transports: passkey.transports as AuthenticatorTransportFuture[],
      },
      requireUserVerification: false,
    });
  } catch {
    verification = null;
  }
  if (!verification?.verified) throw await refuse();
  const newCounter = verification.authenticationInfo.newCounter;
  return store.transaction(async (tx) => {
    await tx.clearFailures(user.email);
    await tx.passkeyUsed(passkey.id, newCounter, ctx.clock());
    const session = await startSession(tx, ctx, user.id, address);
    await auditSignIn(tx, user.id, address, 'user.signed_in_with_passkey', { passkey_id: passkey.id });
    return session;
  });
}
