import { z } from 'zod';
import { parseId } from './ids.js';
import { parseBoolean } from './booleans.js';
import { parseDate, parseDateFilter, parseTimestamp } from './dates.js';
import { customIssue } from './validation.js';

// The spec's value conventions as zod types, written once (spec 1.4, 1.7, 1.9, 4.1; D3, D10).
// Query parameters arrive as strings; `query.*` read them and fail with a message naming the rule.

export const MAX_ITEMS_PER_PAGE = 200;
export const DEFAULT_ITEMS_PER_PAGE = 30;

/** An identifier in a path: UUID or base58; anything else is a 404 (D10), decided by the renderer. */
export const pathId = () =>
  z
    .string()
    .meta({ description: 'UUID (RFC 4122) or its 22-character base58 form' })
    .transform((v, ctx) => {
      const id = parseId(v);
      if (!id) {
        customIssue(ctx, 'This value is not a valid identifier.', 'identifier');
        return z.NEVER;
      }
      return id;
    });

/** An identifier in a body: UUID or base58, normalised to RFC 4122. */
export const bodyId = pathId;

/** A record named by id or, where the record has one, by alias / e-mail (spec 1.5). */
export const bodyRef = () =>
  z.string().min(1).max(200).meta({ description: 'UUID, base58 form, or alias' });

export const timestamp = () =>
  z
    .string()
    .meta({ description: 'ISO 8601 timestamp with offset', format: 'date-time' })
    .transform((v, ctx) => {
      const d = parseTimestamp(v);
      if (!d) {
        customIssue(ctx, 'This value is not a valid timestamp with offset (for example 2027-07-01T10:00:00+02:00).', 'timestamp');
        return z.NEVER;
      }
      return d;
    });

export const dateOnly = () =>
  z
    .string()
    .meta({ description: 'date YYYY-MM-DD', format: 'date' })
    .transform((v, ctx) => {
      const d = parseDate(v.length > 10 ? v.slice(0, 10) : v);
      if (!d || (v.length > 10 && !parseTimestamp(v))) {
        customIssue(ctx, 'This value is not a valid date (YYYY-MM-DD).', 'date');
        return z.NEVER;
      }
      return d;
    });

/** U+0000 cannot reach PostgreSQL (text, LIKE patterns): a filter holding it is malformed (400). */
const noNul = (v: string, ctx: z.RefinementCtx) => {
  if (v.includes('\u0000')) customIssue(ctx, 'This value must not contain the NUL character (%00).', 'format');
};

export const query = {
  string: () => z.string().max(500).superRefine(noNul).optional(),
  boolean: () =>
    z
      .string()
      .meta({ description: 'true/false, 1/0 or yes/no' })
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const b = parseBoolean(v);
        if (b === null) {
          customIssue(ctx, `"${v.slice(0, 40)}" is not a boolean; use true or false.`, 'type');
          return z.NEVER;
        }
        return b;
      }),
  dateFilter: () =>
    z
      .string()
      .meta({ description: 'date YYYY-MM-DD or ISO 8601 timestamp with offset' })
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        // An offset's `+` sent unencoded arrives as a space (form decoding); a space is never valid there.
        const d = parseDateFilter(v.replace(/ (\d{2}(?::?\d{2})?)$/, '+$1'));
        if (!d) {
          customIssue(ctx, `"${v.slice(0, 40)}" is not a valid date or timestamp.`, 'date');
          return z.NEVER;
        }
        return d;
      }),
  /** Comma-separated values from a closed list (OR); an unknown one fails. */
  oneOf: <T extends string>(values: readonly T[]) =>
    z
      .string()
      .meta({ description: `comma-separated, any of: ${values.join(', ')}` })
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const parts = v.split(',').map((s) => s.trim()).filter(Boolean);
        const unknown = parts.filter((p) => !values.includes(p as T));
        if (unknown.length > 0 || parts.length === 0) {
          customIssue(ctx, `unknown value "${(unknown[0] ?? v).slice(0, 40)}"; allowed: ${values.join(', ')}.`, 'choice');
          return z.NEVER;
        }
        return parts as T[];
      }),
  /** A single value from a closed list. */
  choice: <T extends string>(values: readonly T[]) =>
    z
      .string()
      .meta({ description: `one of: ${values.join(', ')}` })
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        if (!values.includes(v as T)) {
          customIssue(ctx, `unknown value "${v.slice(0, 40)}"; allowed: ${values.join(', ')}.`, 'choice');
          return z.NEVER;
        }
        return v as T;
      }),
  integer: (min: number, max: number) =>
    z
      .string()
      .meta({ description: `whole number from ${min} to ${max}` })
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        if (!/^-?\d{1,9}$/.test(v) || Number(v) < min || Number(v) > max) {
          customIssue(ctx, `must be a whole number between ${min} and ${max}.`, 'range');
          return z.NEVER;
        }
        return Number(v);
      }),
};

/** Pagination (spec 4.1, D3): `page` from 1, `itemsPerPage` 1-200, default 30; never a silent cap. */
export const paginationQuery = {
  page: query.integer(1, 1_000_000),
  itemsPerPage: query.integer(1, MAX_ITEMS_PER_PAGE),
};

export type Page = { limit: number; offset: number };

export function pageOf(input: { page?: number; itemsPerPage?: number }): Page {
  const limit = input.itemsPerPage ?? DEFAULT_ITEMS_PER_PAGE;
  return { limit, offset: ((input.page ?? 1) - 1) * limit };
}

/** The common list filters of D6: `q`, `modifiedSince` and pagination. */
export const listQuery = {
  q: query.string(),
  modifiedSince: query.dateFilter(),
  ...paginationQuery,
};
