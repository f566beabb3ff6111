import { DateTime } from 'luxon';
import { z } from 'zod';
import { MAX_CHILDREN, MAX_WISHES_PER_CHILD, birthDateProblem } from '../../domain/family-applications.js';
import { bodyId, dateOnly } from '../../platform/http/fields.js';
import { ZONE } from '../../platform/http/dates.js';
import { customIssue } from '../../platform/http/validation.js';

// D11, issue 21 item 2: one request per family, handed in by the municipality's website with its website token.

/** A required name: trimmed, 1..100 characters. */
const name = () => z.string().trim().min(1).max(100);
/** An optional text: trimmed; an empty string counts as no value. */
const text = (max: number) => z.string().trim().max(max).transform((v) => (v === '' ? null : v));
const email = z.preprocess((v) => (typeof v === 'string' ? v.trim() : v), z.email().max(254));

const dateOfBirth = dateOnly().superRefine((d, ctx) => {
  const problem = birthDateProblem(d, DateTime.now().setZone(ZONE).toISODate()!);
  if (problem) customIssue(ctx, problem, 'range');
});

const wish = z.object({
  offer: bodyId().meta({ description: 'the offer (UUID or base58 form) the child applies for' }),
  userPriority: z.number().int().max(1_000_000).nullish().meta({ description: 'the family\'s priority for the lot (1 = most wanted); negative values become 0' }),
  allAlternateDates: z.boolean().nullish().meta({ description: 'the child can come to every date of the offer (default true)' }),
  answers: z.record(z.string().max(100), z.union([z.string(), z.boolean(), z.number().int()]))
    .meta({ description: 'answers to the offer\'s application questions: keys are question UUIDs; values strings, booleans or whole numbers as the question\'s type says; a `file` answer is the uuid of a file uploaded with the same token (POST /files)' })
    .nullish(),
}).meta({ id: 'FamilyWish', description: 'One wish of a child: an offer, with the family\'s priority and the answers to its questions.' });

const child = z.object({
  firstname: name(),
  lastname: name(),
  dateOfBirth,
  guardianEmail: email.nullish().meta({ description: 'the guardian\'s address when it is not the account\'s (a teenager applying alone): the guardian is asked for consent once the family confirmed its address' }),
  wishes: z.array(wish).min(1).max(MAX_WISHES_PER_CHILD),
}).meta({ id: 'FamilyChild', description: 'A child of the family; the same child as one of the account\'s when first name and date of birth match.' });

export const submitFamilyApplicationInput = z.object({
  account: z.object({
    email: email.meta({ description: 'the family: an account is its e-mail address (applying again adds to it)' }),
    firstname: name(),
    lastname: name(),
    phone: text(50).nullish(),
    street: text(200).nullish(),
    zip: text(20).nullish(),
    city: text(100).nullish(),
  }).meta({ id: 'FamilyAccount', description: 'The guardian who applies: the family account (its e-mail address is the family).' }),
  emailVerified: z.boolean().nullish().meta({
    description: 'true when the website itself verified that the family controls this address (for example a signed-in family account of the website); the website then answers for it, and no confirmation mail is sent. Default false: the address is asked to confirm (double opt-in), also when it confirmed before.',
  }),
  participants: z.array(child).min(1).max(MAX_CHILDREN),
}).meta({ id: 'FamilyApplication', description: 'A family\'s application: the guardian\'s account, the children, each child\'s wishes. All or nothing.' });
export type SubmitFamilyApplicationInput = z.output<typeof submitFamilyApplicationInput>;

export const confirmationTokenInput = z.object({
  token: z.string().min(1).max(200).meta({ description: 'the token from the link of the mail ({token} of confirmationUrlTemplate / consentUrlTemplate)' }),
}).meta({ id: 'ConfirmationToken', description: 'The single-use token of a confirmation or consent mail\'s link.' });
export type ConfirmationTokenInput = z.output<typeof confirmationTokenInput>;
