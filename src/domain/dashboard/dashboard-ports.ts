import type { DashboardRole } from './roles.js';
import type { DashboardSessionReader } from './session-list-ports.js';

/** Storage of dashboard accounts (docs/dashboard.md), implemented over Prisma in src/db/dashboard. */
export interface DashboardUserRecord {
  readonly id: string;
  readonly email: string;
  readonly passwordHash: string | null;
  readonly disabledAt: Date | null;
  readonly createdAt: Date;
}

export interface MembershipRecord {
  readonly organisationId: string;
  readonly organisationName: string;
  readonly userId: string;
  readonly role: DashboardRole;
}

export type DashboardLinkKind = 'invite' | 'sign_in';

export interface DashboardLinkRecord {
  readonly id: string;
  readonly kind: DashboardLinkKind;
  readonly userId: string;
  readonly organisationId: string;
  readonly expiresAt: Date;
}

export interface DashboardSessionRecord {
  readonly id: string;
  readonly userId: string;
  readonly csrfToken: string;
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
  readonly expiresAt: Date;
}

export interface NewDashboardSession {
  readonly id: string;
  readonly tokenHash: string;
  readonly userId: string;
  readonly csrfToken: string;
  readonly address: string;
  readonly expiresAt: Date;
}

export interface AuditEntry {
  readonly organisationId: string | null;
  /** Null: the operator CLI. */
  readonly userId: string | null;
  readonly action: string;
  readonly details: Readonly<Record<string, string | number | boolean | null>>;
  readonly address: string | null;
}

export interface AuditRecord extends AuditEntry {
  readonly id: string;
  readonly userEmail: string | null;
  readonly createdAt: Date;
}

/** Failed sign-ins since a moment: how many, and when the oldest of them was. */
export interface FailureCount {
  readonly count: number;
  readonly oldest: Date | null;
}

export type PasskeyCeremony = 'register' | 'sign_in';

/** A passkey (WebAuthn credential) of an account: `credentialId` base64url, `publicKey` COSE. */
export interface PasskeyRecord {
  readonly id: string;
  readonly userId: string;
  readonly credentialId: string;
  readonly publicKey: Uint8Array;
  readonly signCount: number;
  readonly transports: readonly string[];
  readonly name: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

/** The reads and writes a use-case composes; inside `transaction` they commit together. */
export interface DashboardWrites {
  findUserByEmail(email: string): Promise<DashboardUserRecord | null>;
  findUserById(id: string): Promise<DashboardUserRecord | null>;
  insertUser(user: { id: string; email: string }): Promise<void>;
  setPassword(userId: string, passwordHash: string): Promise<void>;
  disableUser(userId: string, at: Date): Promise<void>;
  membership(organisationId: string, userId: string): Promise<MembershipRecord | null>;
  membershipsOf(userId: string): Promise<MembershipRecord[]>;
  membersOf(organisationId: string): Promise<Array<MembershipRecord & { user: DashboardUserRecord }>>;
  insertMembership(membership: { organisationId: string; userId: string; role: DashboardRole }): Promise<void>;
  insertLink(link: DashboardLinkRecord & { tokenHash: string }): Promise<void>;
  /** Marks the user's unused links of `kind` used: a new invite replaces the one before. */
  retireLinks(userId: string, kind: DashboardLinkKind, at: Date): Promise<void>;
  /** Marks the unused, unexpired link with this token used and returns it; null when there is none (once only). */
  claimLink(tokenHash: string, kind: DashboardLinkKind, now: Date): Promise<DashboardLinkRecord | null>;
  insertSession(session: NewDashboardSession): Promise<void>;
  findSession(tokenHash: string): Promise<DashboardSessionRecord | null>;
  /** Moves the session's expiry on; false when it no longer exists (signed out meanwhile). */
  touchSession(id: string, lastSeenAt: Date, expiresAt: Date): Promise<boolean>;
  deleteSession(id: string): Promise<void>;
  /** Ends every session of the user; returns how many there were. */
  deleteSessionsOf(userId: string): Promise<number>;
  failuresSince(since: Date, by: { email: string } | { address: string }): Promise<FailureCount>;
  recordFailure(email: string, address: string): Promise<void>;
  /** Forgets the account's failures (after a successful sign-in). */
  clearFailures(email: string): Promise<void>;
  audit(entry: AuditEntry): Promise<void>;
  insertPasskeyChallenge(challenge: {
    challenge: string;
    ceremony: PasskeyCeremony;
    userId: string | null;
    expiresAt: Date;
  }): Promise<void>;
  /** Deletes the unexpired challenge and returns whose it was; null when there is none (so each is used once). */
  takePasskeyChallenge(
    challenge: string,
    ceremony: PasskeyCeremony,
    now: Date,
  ): Promise<{ userId: string | null } | null>;
  insertPasskey(passkey: Omit<PasskeyRecord, 'createdAt' | 'lastUsedAt'>): Promise<void>;
  passkeysOf(userId: string): Promise<PasskeyRecord[]>;
  findPasskeyByCredentialId(credentialId: string): Promise<PasskeyRecord | null>;
  passkeyUsed(id: string, signCount: number, at: Date): Promise<void>;
  /** Deletes the passkey (only the user's when `userId` is given) and returns it; null when there was none. */
  deletePasskey(id: string, userId?: string): Promise<PasskeyRecord | null>;
  /**
   * Makes every failed delivery to the organisation's enabled endpoints pending and due now, with a fresh give-up
   * time (as one redelivery each); returns their ids.
   */
  redeliverFailedWebhooks(organisationId: string, giveUpHours: number): Promise<string[]>;
  /** Newest first, entries with an id below `before` when given. */
  auditLog(organisationId: string, limit: number, before?: string): Promise<AuditRecord[]>;
}

export interface DashboardStore extends DashboardWrites {
  /**
   * Deletes failures, sessions, links and passkey challenges past these moments (links: used or expired before),
   * and clears the whole answers (body, headers) of webhook attempts made before `webhookResponsesBefore`.
   */
  purge(before: {
    failuresBefore: Date;
    sessionsExpiredBefore: Date;
    linksBefore: Date;
    webhookResponsesBefore: Date;
  }): Promise<number>;
  /** The sessions list and a session's story (docs/dashboard.md#sessions-list). */
  readonly sessions: DashboardSessionReader;
  transaction<T>(work: (tx: DashboardWrites) => Promise<T>): Promise<T>;
}
