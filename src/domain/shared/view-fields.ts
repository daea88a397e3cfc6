import { z } from 'zod';

/**
 * The building blocks of the response schemas (the *.views.ts files): each view's zod schema
 * is the one source of its shape. The view functions are typed from them, OpenAPI's response
 * schemas are generated from them (src/rest/openapi-components.ts), and the TypeScript
 * client's types from OpenAPI.
 */

/** A decimal string with exactly 8 fractional digits (docs/api/rest.md#resources). */
export const amount = z.string().regex(/^-?\d+\.\d{8}$/);
export const uuid = z.uuid();
/** ISO 8601 in UTC, as `Date.prototype.toISOString` writes it. */
export const dateTime = z.iso.datetime();
/** Free-form JSON, as the merchant sent it. */
export const freeForm = z.record(z.string(), z.unknown());
