import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import type { Meta } from './trpc.js';

// OpenAPI 3.1 at `<base>/openapi.json`: trpc-to-openapi's document, post-processed to show the real
// success statuses (201/202/204) and the problem+json error bodies of spec 7.
const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', examples: ['/errors/404', '/validation_errors/c1051bb4-d103-4f74-8988-acbcafc7fdc3'] },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    violations: {
      type: 'array',
      items: {
        type: 'object',
        required: ['propertyPath', 'message', 'code'],
        properties: { propertyPath: { type: 'string' }, message: { type: 'string' }, code: { type: 'string', format: 'uuid' } },
      },
    },
  },
};

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Malformed query parameter or body',
  '401': 'Missing, unknown, expired or revoked token',
  '403': 'The caller may not do this',
  '404': 'No such record, or not visible to the caller',
  '409': 'Conflicts with the record\'s state',
  '413': 'Body too large',
  '415': 'Body without a JSON content type',
  '422': 'Validation failed',
  '429': 'Rate limit exceeded',
};

export function buildOpenApiDocument(router: AnyRouter, baseUrl: string): Record<string, unknown> {
  const doc = generateOpenApiDocument(router, {
    title: 'Holiday Programme Service API',
    version: '1.0.0',
    baseUrl,
    description: 'JSON API of a municipal holiday programme. Errors are application/problem+json (RFC 9457).',
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
  }) as unknown as { paths: Record<string, Record<string, any>>; components?: Record<string, any> };

  const metaByOperation = new Map<string, Meta>();
  for (const proc of Object.values(router._def.procedures as Record<string, { _def: { meta?: Meta } }>)) {
    const m = proc._def.meta;
    if (m?.openapi) metaByOperation.set(`${m.openapi.method.toLowerCase()} ${m.openapi.path}`, m);
  }

  doc.components ??= {};
  doc.components.schemas ??= {};
  doc.components.schemas.Problem = problemSchema;
  const problemRef = { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };

  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(ops)) {
      const meta = metaByOperation.get(`${method} ${path}`);
      const responses: Record<string, any> = op.responses ?? {};
      const status = meta?.successStatus;
      if (status && status !== 200 && responses['200']) {
        const ok = responses['200'];
        delete responses['200'];
        responses[String(status)] = status === 204 ? { description: 'No content' } : ok;
      }
      for (const key of Object.keys(responses)) if (/^[45]\d\d$|^default$/.test(key)) delete responses[key];
      for (const [code, description] of Object.entries(ERROR_STATUSES)) responses[code] = { description, ...problemRef };
      op.responses = responses;
      if (meta?.access === 'public') op.security = [{}, { bearer: [] }];
      else op.security = [{ bearer: [] }];
    }
  }
  return doc as unknown as Record<string, unknown>;
}
