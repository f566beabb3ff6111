import { describe, expect, it } from 'vitest';
import { problemAnswer, resultAnswer, withEntityTag } from '../../../src/platform/http/answer.js';
import { etagOf } from '../../../src/platform/http/conditional.js';
import { finalJson } from '../../../src/platform/http/final-json.js';
import { PROBLEM_CONTENT_TYPE, renderProblem } from '../../../src/platform/http/problem.js';
import { rawFile } from '../../../src/platform/http/raw.js';

// Issue 26: the answer is a value (status, headers, body) built in one place and written once; these are the
// steps on values (the HTTP behaviour itself is proved by the route tests: conditional, idempotency, files, …).
describe('the answer as a value', () => {
  it('turns a result into JSON with its status, a file into an attachment, final JSON text into the body as it is', () => {
    expect(resultAnswer(201, { a: 1 }, { 'X-Total-Count': '1' })).toEqual({
      status: 201, headers: { 'X-Total-Count': '1', 'Content-Type': 'application/json' }, body: '{"a":1}',
    });
    expect(resultAnswer(204, undefined, {})).toEqual({ status: 204, headers: {} });
    expect(resultAnswer(200, finalJson(' [ 1 ] '), {}).body).toBe(' [ 1 ] ');
    const file = resultAnswer(200, rawFile(Buffer.from('%PDF'), 'application/pdf', 'a b.pdf'), {});
    expect(file.headers).toEqual({ 'Content-Type': 'application/pdf', 'Content-Disposition': 'attachment; filename="a b.pdf"', 'Content-Length': '4' });
    expect(file.body).toEqual(Buffer.from('%PDF'));
  });

  it('tags a 200 to GET and PATCH, answers a matching If-None-Match with 304 without body, leaves the rest alone', () => {
    const ok = resultAnswer(200, { a: 'ä' }, {});
    const tagged = withEntityTag('GET', {}, ok);
    expect(tagged.headers.ETag).toBe(etagOf('{"a":"ä"}'));
    expect(tagged.body).toEqual(Buffer.from('{"a":"ä"}'));
    expect(withEntityTag('PATCH', {}, ok).headers.ETag).toBe(tagged.headers.ETag);
    for (const header of [tagged.headers.ETag!, tagged.headers.ETag!.slice(2), `"x", ${tagged.headers.ETag}`, '*']) {
      const notModified = withEntityTag('GET', { 'if-none-match': header }, ok);
      expect(notModified).toEqual({ status: 304, headers: { ETag: tagged.headers.ETag } });
    }
    expect(withEntityTag('GET', { 'if-none-match': 'W/"other"' }, ok).status).toBe(200);
    // If-None-Match is for reads; a PATCH answer is tagged, never 304.
    expect(withEntityTag('PATCH', { 'if-none-match': '*' }, ok).status).toBe(200);
    expect(withEntityTag('POST', {}, ok)).toBe(ok);
    expect(withEntityTag('GET', {}, resultAnswer(201, {}, {}))).toEqual(resultAnswer(201, {}, {}));
  });

  it('renders a problem as problem+json, never cached, private for a token, with its own headers', () => {
    const problem = { body: renderProblem({ status: 401, detail: 'Send a token.' }), headers: { 'WWW-Authenticate': 'Bearer' } };
    const a = problemAnswer(problem, false);
    expect(a.status).toBe(401);
    expect(a.headers).toEqual({ 'WWW-Authenticate': 'Bearer', 'Cache-Control': 'no-store', 'Content-Type': PROBLEM_CONTENT_TYPE });
    expect(JSON.parse(String(a.body))).toMatchObject({ status: 401, detail: 'Send a token.' });
    expect(problemAnswer(problem, true).headers['Cache-Control']).toBe('private, no-store');
  });
});
