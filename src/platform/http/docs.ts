import type { Request, Response } from 'express';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { tenantOf } from '../tenancy/middleware.js';
import { publicBaseUrl } from './public-url.js';

// `<base>/docs` (issue 12): an interactive API reference of the municipality's own `<base>/openapi.json`,
// rendered by Scalar's standalone bundle served from its npm package (`<base>/docs/scalar.js`): no CDN, no
// inline script (the configuration travels in a data attribute), fonts and telemetry off. Mounted before
// the token and rate-limit middleware, like the document itself: it is public and static.

const require = createRequire(import.meta.url);
let bundle: Buffer | undefined;

function scalarBundle(): Buffer {
  bundle ??= readFileSync(path.join(path.dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js'));
  return bundle;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page's own policy: the bundle from this host, its styles inline, requests only to this host. */
const DOCS_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data: blob:",
  "font-src 'self' data:", "connect-src 'self'", "worker-src 'self' blob:", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'",
].join('; ');

export function docsPage(req: Request, res: Response): void {
  const { tenant, basePath } = tenantOf(req) as { tenant: { name: string }; basePath: string };
  const base = basePath === '/' ? '' : basePath;
  // "Try it" calls this very host as the browser reached it (scheme and port included).
  const server = publicBaseUrl(req);
  const configuration = {
    url: `${base}/openapi.json`,
    servers: [{ url: server, description: tenant.name }],
    withDefaultFonts: false,
    hideClientButton: true,
    telemetry: false,
    showDeveloperTools: 'never',
    agent: { disabled: true },
    mcp: { disabled: true },
    defaultOpenAllTags: true,
    metaData: { title: `${tenant.name}: API` },
  };
  res.setHeader('Content-Security-Policy', DOCS_CSP);
  res.setHeader('Cache-Control', 'public, max-age=60');
  res.type('html').send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(tenant.name)}: API reference</title>
</head>
<body>
<noscript>The API reference needs JavaScript. The document itself is at <a href="${escapeHtml(base)}/openapi.json">${escapeHtml(base)}/openapi.json</a>.</noscript>
<script id="api-reference" data-url="${escapeHtml(configuration.url)}" data-configuration="${escapeHtml(JSON.stringify(configuration))}"></script>
<script src="${escapeHtml(base)}/docs/scalar.js"></script>
</body>
</html>
`);
}

export function docsBundle(_req: Request, res: Response): void {
  res.setHeader('Cache-Control', 'public, max-age=86400');
  res.type('application/javascript').send(scalarBundle());
}
