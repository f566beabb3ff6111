import type { Request } from 'express';
import { tenantOf } from '../tenancy/middleware.js';

/**
 * The address the caller reached this municipality's API at (issue 24): the request's scheme (`req.protocol`, which
 * reads `X-Forwarded-Proto` only from a trusted proxy), its host with the port it came in on (the Host header, or
 * the forwarded host behind a trusted proxy, as the tenancy middleware checked it) and the base path. The OpenAPI
 * document's `servers`, the docs page's "Test Request" and the problem type pages use it, so a
 * client on `http://localhost:8080` is sent back to `http://localhost:8080/api`, not to `https://localhost/api`.
 */
export function publicBaseUrl(req: Request): string {
  const { basePath } = tenantOf(req);
  return `${req.protocol}://${req.headers.host}${basePath === '/' ? '' : basePath}`;
}
