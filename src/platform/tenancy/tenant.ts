import type { TenantSettings } from './settings.js';

export const SLUG_RE = /^[a-z][a-z0-9-]{1,40}$/;

export type TenantHost = { host: string; basePath: string };

export type Tenant = {
  slug: string;
  name: string;
  schema: string;
  hosts: TenantHost[];
  settings: TenantSettings;
  /** Issue 24: set while the operator has suspended the tenant (`tenant suspend`): 503 to every request, jobs wait. */
  suspended?: { since: string; reason: string | null };
};

/** D1: the schema name derives from the slug, never from request input. */
export function schemaNameFor(slug: string): string {
  if (!SLUG_RE.test(slug)) throw new Error(`invalid tenant slug "${slug}"`);
  return `t_${slug.replace(/-/g, '_')}`;
}

/**
 * A host as the CLI takes it back (`--host`, `tenant host add`): the bare name for an admin host below `/api` (the
 * default), `<name>/` for a separate API domain, `<name><basePath>` otherwise.
 */
export function formatHostArgument(h: TenantHost): string {
  return h.basePath === '/api' ? h.host : h.basePath === '/' ? `${h.host}/` : `${h.host}${h.basePath}`;
}

/** `<hostname>[/<basePath>]` as the CLI takes it; an admin host defaults to `/api`. */
export function parseHostArgument(arg: string): TenantHost {
  const slash = arg.indexOf('/');
  const host = (slash < 0 ? arg : arg.slice(0, slash)).toLowerCase();
  let basePath = slash < 0 ? '/api' : arg.slice(slash) || '/';
  if (basePath !== '/' && basePath.endsWith('/')) basePath = basePath.slice(0, -1);
  if (!/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(host)) throw new Error(`invalid host name "${arg}"`);
  if (!/^\/([a-z0-9._-]+(\/[a-z0-9._-]+)*)?$/i.test(basePath)) throw new Error(`invalid base path in "${arg}"`);
  return { host, basePath };
}

/**
 * A Host header value (RFC 9110 7.2: `uri-host [ ":" port ]`) split and checked: a registered name or IP
 * literal, and a port of at most 5 digits in 0..65535. Anything else is malformed (null), so no later
 * reader of the header (express, tRPC's URL building) meets a value `new URL` refuses.
 */
export function parseHostHeader(value: string): { host: string; port: string | null } | null {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9._~-]+)(?::(\d{0,5}))?$/i.exec(value);
  if (!m) return null;
  const port = m[2] === undefined || m[2] === '' ? null : m[2];
  if (port !== null && Number(port) > 65535) return null;
  if (m[1].startsWith('[')) {
    try {
      new URL(`http://${m[1]}`);
    } catch {
      return null;
    }
  }
  return { host: m[1].toLowerCase(), port };
}

/** Host header to host name: port removed, lower-cased (D1); the first of a forwarded list. Null when absent. */
export function normaliseHostHeader(value: string | undefined): string | null {
  if (!value) return null;
  const first = value.split(',')[0].trim();
  return parseHostHeader(first)?.host ?? null;
}

/** The path below the tenant's base path, or null when the path lies outside it. */
export function pathBelowBase(basePath: string, path: string): string | null {
  if (basePath === '/') return path;
  if (path === basePath) return '/';
  if (path.startsWith(basePath + '/')) return path.slice(basePath.length);
  return null;
}
