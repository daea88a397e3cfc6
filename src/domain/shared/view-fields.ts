import { z } from 'zod';

/**
 * The building blocks of the response schemas (*.views.ts): each view's zod schema is the one source of its shape, for
 * the view functions' types, OpenAPI's schemas and so the TypeScript client's.
 */

/** A decimal string with exactly 8 fractional digits (docs/api/rest.md#resources). */
export const amount = z.string().regex(/^-?\d+\.\d{8}$/);
export const uuid = z.uuid();
/** ISO 8601 in UTC, as `Date.prototype.toISOString` writes it. */
export const dateTime = z.iso.datetime();
/** Free-form JSON, as the merchant sent it. */
export const freeForm = z.record(z.string(), z.unknown());
