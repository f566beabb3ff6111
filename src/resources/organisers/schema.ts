import { z } from 'zod';
import { listQuery, pathId } from '../../platform/http/fields.js';
import { response, timestampOut } from '../../platform/http/response.js';

// D6: `/organisers` (`uuid`, `name`, `alias`, `email`, `phone`, `website`, address fields, `description`).
const name = z.string().trim().min(1).max(200);
const alias = z.string().trim().min(1).max(80);

/** An optional text: trimmed; an empty string counts as no value (null). */
const text = (max: number) =>
  z.string().trim().max(max).transform((v) => (v === '' ? null : v));

/** An e-mail address; an empty string counts as no value. */
const email = z.preprocess(
  (v) => (typeof v === 'string' ? (v.trim() === '' ? null : v.trim()) : v),
  z.email().max(254).nullable(),
);

/** An absolute http(s) URL; an empty string counts as no value. */
const website = z.preprocess(
  (v) => (typeof v === 'string' ? (v.trim() === '' ? null : v.trim()) : v),
  z.url({ protocol: /^https?$/, hostname: z.regexes.domain }).max(2000).nullable(),
);

/** The optional fields, shared by create and update; each accepts null (clears it on PATCH). */
const optionalFields = {
  email: email.optional(),
  phone: text(50).nullish(),
  website: website.optional(),
  street: text(200).nullish(),
  zip: text(20).nullish(),
  city: text(100).nullish(),
  description: text(20_000).nullish(),
};

export const organiserOut = z.object({
  uuid: z.string(),
  name: z.string(),
  alias: z.string(),
  email: z.string().optional(),
  phone: z.string().optional(),
  website: z.string().optional(),
  street: z.string().optional(),
  zip: z.string().optional(),
  city: z.string().optional(),
  description: z.string().optional(),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
}).meta({ id: 'Organiser', description: 'A club, institution or person offering activities.' });
export type OrganiserOut = z.infer<typeof organiserOut>;

export const organiserResponse = response(organiserOut);
export const organiserListResponse = response(z.array(organiserOut));

export const listOrganisersInput = z.object({ ...listQuery });
export type ListOrganisersInput = z.output<typeof listOrganisersInput>;

export const organiserIdInput = z.object({ uuid: pathId() });

export const createOrganiserInput = z.object({ name, alias: alias.optional(), ...optionalFields });
export type CreateOrganiserInput = z.output<typeof createOrganiserInput>;

/** PATCH: only keys sent apply; null clears optional fields; `name` ignores null (spec 1.12); `alias` null re-derives it. */
export const updateOrganiserInput = z.object({
  uuid: pathId(),
  name: name.nullish(),
  alias: alias.nullish(),
  ...optionalFields,
});
export type UpdateOrganiserInput = z.output<typeof updateOrganiserInput>;

/** The optional fields a write may set or clear. */
export const ORGANISER_OPTIONAL_FIELDS = ['email', 'phone', 'website', 'street', 'zip', 'city', 'description'] as const;
