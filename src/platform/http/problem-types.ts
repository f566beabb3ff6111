import type { Request, Response } from 'express';
import { RULE_CODES, type RuleCode } from '../../domain/errors.js';
import { tenantOf } from '../tenancy/middleware.js';
import { notFound } from '../../domain/errors.js';
import { PROBLEM_STATUSES, problemTitle } from './problem.js';

// Issue 24: every problem `type` (`/errors/<status>`, `/validation_errors/<code>`, spec 7) is a short page under the
// base path saying what it means and what to do, so the URI in an error body leads somewhere. `<base>/errors` lists
// them all and is linked from the API reference (`<base>/docs`, through the document's description). Public and
// static, mounted before the token like the document itself.

type Page = { meaning: string; todo: string };

const STATUS_PAGES: Record<number, Page> = {
  400: { meaning: 'A query parameter or header is malformed (its name starts `detail`), or the body is not valid JSON.', todo: 'Correct the value named in `detail`. Query parameters are strings: dates as `2027-07-05` or a timestamp with offset, booleans as `true`/`false`, `itemsPerPage` 1-200.' },
  401: { meaning: 'The request needs a token, or the token sent is unknown, expired, revoked or belongs to another municipality. Anonymous reads of offers also answer 401 while the municipality has switched public access off.', todo: 'Send `Authorization: Bearer <token>` with a valid token of this municipality. Ask its team for a new token if yours expired or was revoked.' },
  403: { meaning: 'The token is valid but lacks the right: a read-only token on a write, an old `api:offer:read` token outside the offer reads, an organiser outside its own offers, or a role that may not do this.', todo: 'Use a token with the access and role the operation names (each operation of the API reference says who may call it).' },
  404: { meaning: 'No such record, or one the caller may not see; a malformed identifier is 404 too. Also: no municipality at this host, or a path outside its base path.', todo: 'Check the identifier (UUID or its 22-character base58 form) and the base path. A record of another municipality is never found here.' },
  405: { meaning: 'The record exists but never changes this way: bookings and receipts are never changed or deleted. The `Allow` header names what the path accepts.', todo: 'Reverse a receipt with `POST /receipts/{uuid}/reverse`; bookings follow from receipts and applications.' },
  408: { meaning: 'The request\'s headers or body did not arrive in time.', todo: 'Send the whole request promptly; retry on a slow connection.' },
  409: { meaning: 'The change conflicts with the record\'s state: a transition not possible now (`detail` lists the possible ones), a record still referenced, a transfer refused, or a request with the same Idempotency-Key still running.', todo: 'Read the record again, pick a change its current state allows, or wait for the first request with that key to finish.' },
  412: { meaning: '`If-Match` named an ETag that is no longer the record\'s: someone changed it since you read it.', todo: 'Read the record again (GET), apply your change to what you read, and send it with the new ETag.' },
  413: { meaning: 'The body is larger than the limit (1 MiB for JSON).', todo: 'Send less at once.' },
  415: { meaning: 'A body was sent without a JSON content type.', todo: 'Send `Content-Type: application/json` (PATCH also takes `application/merge-patch+json`).' },
  422: { meaning: 'The body is well formed but invalid. With `violations`, each entry names a field (`propertyPath`), a message and the rule\'s code; without, `detail` says why the request makes no sense for the record (a reference that does not exist, an amount above the fee).', todo: 'Correct each field named. The `type` of a 422 with violations is the page of its first violation\'s rule.' },
  429: { meaning: 'A rate limit is exhausted: 300 requests per token refilled at 100 a minute, or 5 an hour for anonymous callers per address and municipality.', todo: 'Wait `Retry-After` seconds. The `RateLimit` header of every answer shows what is left, so a client can slow down before it is refused.' },
  431: { meaning: 'The request\'s headers are larger than 16 KiB.', todo: 'Send fewer or shorter headers.' },
  500: { meaning: 'Something failed inside the service. The cause is logged; the body reveals nothing of it.', todo: 'Retry later. If it persists, give the municipality\'s team the `instance` of the body (`urn:request:…`): it finds the log entry.' },
  503: { meaning: 'The service cannot answer for a moment (its database is unreachable), or the municipality is suspended by its provider: `detail` says which.', todo: 'Retry after `Retry-After` seconds. A suspended municipality answers again once its provider resumes it.' },
};

/** Rules added later without a text here get the general one (`ruleText`). */
const RULE_PAGES: Partial<Record<RuleCode, string>> = {
  required: 'A value that must be given is missing or blank.',
  type: 'The value has the wrong JSON type (a string where a number or boolean belongs, or the other way round).',
  tooLong: 'The text or list is longer than allowed.',
  tooShort: 'The text or list is shorter than allowed.',
  tooHigh: 'The number is above its maximum (for example `maxAge` above 99).',
  tooLow: 'The number is below its minimum.',
  choice: 'The value is not one of the allowed values (the message lists them).',
  identifier: 'The value is not a UUID or its 22-character base58 form.',
  timestamp: 'The value is not an ISO 8601 timestamp with an offset (for example `2027-07-01T10:00:00+02:00`).',
  date: 'The value is not a date `YYYY-MM-DD`.',
  url: 'The value is not an absolute URL of the kind the field takes (https where required).',
  email: 'The value is not an e-mail address.',
  format: 'The value does not have the field\'s format (the message says which).',
  unique: 'The value is already used by another record (an alias, an account\'s e-mail address).',
  unknownField: 'The body has a field the resource does not have (read-only fields the resource returns are ignored).',
  range: 'The value lies outside the range the field allows, or contradicts another field (an end before its begin).',
  invalid: 'The value breaks a rule of the record (the message says which).',
  imageTooLarge: 'An image of `media` is larger than 3000 x 3000 pixels.',
  imageUnverifiable: 'An image of `media` could not be checked (not https, a private address, a redirect, no answer or no readable size).',
};

const ruleText = (r: RuleCode) => RULE_PAGES[r] ?? 'A value breaks this rule; the violation\'s `message` says how.';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** `code` spans for backticked words, everything escaped. */
const prose = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');

const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

function html(res: Response, title: string, body: string): void {
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('Cache-Control', 'public, max-age=3600');
  res.type('html').send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f2f2f2;padding:0 .2em}h1{font-size:1.5rem}li{margin:.3em 0}</style>
</head>
<body>
${body}
</body>
</html>
`);
}

const base = (req: Request) => {
  const b = tenantOf(req).basePath;
  return b === '/' ? '' : b;
};

function footer(req: Request): string {
  return `<p><a href="${escapeHtml(base(req))}/errors">All problem types</a> · <a href="${escapeHtml(base(req))}/docs">API reference</a></p>`;
}

/** `<base>/errors`: every problem type with its title. */
export function problemTypeIndex(req: Request, res: Response): void {
  const b = escapeHtml(base(req));
  const statuses = PROBLEM_STATUSES.map((s) => `<li><a href="${b}/errors/${s}"><code>/errors/${s}</code></a> ${escapeHtml(problemTitle(s))}</li>`).join('\n');
  const rules = (Object.keys(RULE_CODES) as RuleCode[]).map((r) =>
    `<li><a href="${b}/validation_errors/${RULE_CODES[r]}"><code>/validation_errors/${RULE_CODES[r]}</code></a> ${prose(ruleText(r))}</li>`).join('\n');
  html(res, 'Problem types', `<h1>Problem types</h1>
<p>Every error is <code>application/problem+json</code> (RFC 9457) with <code>type</code>, <code>title</code>, <code>status</code> and <code>detail</code>. Its <code>type</code> is one of these paths below the API's base path.</p>
<h2>By status</h2>
<ul>
${statuses}
</ul>
<h2>Validation rules (422 with <code>violations</code>)</h2>
<ul>
${rules}
</ul>
<p><a href="${b}/docs">API reference</a></p>`);
}

/** `<base>/errors/<status>`. */
export function problemStatusPage(req: Request, res: Response): void {
  const status = Number(req.params.status);
  const page = STATUS_PAGES[status];
  if (!/^\d{3}$/.test(String(req.params.status)) || !page) throw notFound(`There is no problem type /errors/${String(req.params.status).slice(0, 20)}; ${base(req)}/errors lists them.`);
  html(res, `/errors/${status} ${problemTitle(status)}`, `<h1><code>/errors/${status}</code> ${escapeHtml(problemTitle(status))}</h1>
<h2>What it means</h2>
<p>${prose(page.meaning)}</p>
<h2>What to do</h2>
<p>${prose(page.todo)}</p>
<p>The body's <code>detail</code> says what happened in this case; <code>instance</code> (<code>urn:request:…</code>) names the request in the service's log.</p>
${footer(req)}`);
}

/** `<base>/validation_errors/<code>`. */
export function validationRulePage(req: Request, res: Response): void {
  const code = String(req.params.code).toLowerCase();
  const rule = (Object.keys(RULE_CODES) as RuleCode[]).find((r) => RULE_CODES[r] === code);
  if (!rule) throw notFound(`There is no validation rule ${String(req.params.code).slice(0, 40)}; ${base(req)}/errors lists them.`);
  html(res, `/validation_errors/${code}`, `<h1>Validation rule <code>${escapeHtml(code)}</code></h1>
<h2>What it means</h2>
<p>${prose(ruleText(rule))} A 422 answer names each field that broke a rule in <code>violations</code> (<code>propertyPath</code>, <code>message</code>, <code>code</code>) and in a line of <code>detail</code>; its <code>type</code> is the page of the first violation's rule.</p>
<h2>What to do</h2>
<p>Correct the field named in <code>propertyPath</code> (nested fields read like <code>dates[0].begin</code>) as its message says, and send the request again.</p>
${footer(req)}`);
}
