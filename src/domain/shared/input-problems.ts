import type { z } from 'zod';

/**
 * How a zod issue becomes one line of a 400's `message` (docs/api/rest.md#errors): the field path, then what is wrong,
 * e.g. "items.0.quantity must not be less than 1". Every input schema reports through this.
 */

/** The message of a value of the wrong kind: "is required" when it is absent, else "must be <what>". */
export const required =
  (what: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? 'is required' : `must be ${what}`;

/** Zod issue → "items.0.quantity must not be less than 1" (the path, then what is wrong). */
export function describeIssue(issue: z.core.$ZodIssue): string[] {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `property ${path ? `${path}.` : ''}${key} should not exist`);
  }
  if (!path) return [`body ${issue.message}`];
  return [`${path} ${issue.message}`];
}

/** Every problem of a failed parse, in the order zod found them. */
export function problemsOf(error: z.ZodError): string[] {
  return error.issues.flatMap(describeIssue);
}
