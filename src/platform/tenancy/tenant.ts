import type { TenantSettings } from './settings.js';

export const SLUG_RE = /^[a-z][a-z0-9-]{1,40}$/;

export type TenantHost = { host: string; basePath: string };

export type Tenant = {
  slug: string;
  name: string;
  schema: string;
  hosts: TenantHost[];
  settings: TenantSettings;
};

/** D1: the schema name derives from the slug, never from request input. */
export function schemaNameFor(slug: string): string {
  if (!SLUG_RE.test(slug)) throw new Error(`invalid tenant slug "${slug}"`);
  return `t_${slug.replace(/-/g, '_')}`;
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

/** Host header to host name: port removed, lower-cased (D1). */
export function normaliseHostHeader(value: string | undefined): string | null {
  if (!value) return null;
  const first = value.split(',')[0].trim().toLowerCase();
  const host = first.startsWith('[') ? first.slice(0, first.indexOf(']') + 1) : first.replace(/:\d+$/, '');
  return host || null;
}

/** The path below the tenant's base path, or null when the path lies outside it. */
export function pathBelowBase(basePath: string, path: string): string | null {
  if (basePath === '/') return path;
  if (path === basePath) return '/';
  if (path.startsWith(basePath + '/')) return path.slice(basePath.length);
  return null;
}
