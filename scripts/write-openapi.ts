import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../src/platform/http/openapi-document.js';
import { appRouter } from '../src/router.js';

// `npm run openapi:write [-- <file>]`: the OpenAPI document exactly as a municipality's `<base>/openapi.json`
// serves it, built from the router without a database or a running server (for linting and the client).
const file = process.argv[2] ?? '.data/openapi.json';
const baseUrl = process.env.OPENAPI_BASE_URL ?? 'http://localhost:8080/api';
mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(appRouter, baseUrl), null, 2)}\n`);
process.stderr.write(`wrote ${file}\n`);
