import type { DashboardRole } from './roles.js';

/** Who makes a change: the operator CLI, or a signed-in dashboard user with a role in the organisation. */
export type DashboardActor =
  | { readonly kind: 'cli' }
  | { readonly kind: 'user'; readonly userId: string; readonly role: DashboardRole; readonly address: string };

export const CLI_ACTOR: DashboardActor = { kind: 'cli' };

export function actorUserId(actor: DashboardActor): string | null {
  return actor.kind === 'user' ? actor.userId : null;
}

export function actorAddress(actor: DashboardActor): string | null {
  return actor.kind === 'user' ? actor.address : null;
}
