import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { HTML, JPEG, PDF, PNG } from '../../fixtures/files.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { create as upload } from '../../factories/file.factory.js';
import { apply, createOffer, createOrganiser, createParticipant, firstcome, transitionOk } from '../attendances/helpers.js';

// Issue 21 item 6, D11 "Files": POST /files takes the file as the raw body (PDF, PNG, JPEG, checked from the
// content, 10 MiB), GET /files/{uuid} serves it as an attachment to admins and to organisers who may read the
// application; files live in the municipality's schema and go with their application.

const { h, t } = useHarness();

const send = (body: Buffer, type: string | null, opts: { path?: `/files?${string}`; headers?: Record<string, string>; token?: string } = {}) =>
  t.request('POST', opts.path ?? '/files', { rawBody: body, headers: { ...(type ? { 'content-type': type } : {}), ...opts.headers }, token: opts.token });

const fileRows = async () => (await sql<{ n: number }>`select count(*)::int as n from ${qualified(t.tenant.schema, 'files')}`.execute(executorOf(h.orm))).rows[0]!.n;

describe('POST /files', () => {
  it.each([
    ['application/pdf', PDF, 'attest.pdf'],
    ['image/png', PNG, 'scan.png'],
    ['image/jpeg', JPEG, 'foto.jpg'],
  ])('%s: 201 with uuid, name, mimeType and size', async (type, bytes, name) => {
    const res = await send(bytes, type, { path: `/files?name=${name}` });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({ uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), name, mimeType: type, size: bytes.length });
  });

  it('takes the name from Content-Disposition (filename* for non-ASCII), else ?name=, else upload.<ext>', async () => {
    const cd = await send(PDF, 'application/pdf', { headers: { 'content-disposition': `attachment; filename="x.pdf"; filename*=UTF-8''%C3%84rztliches%20Attest.pdf` } });
    expect(cd.body.name).toBe('Ärztliches Attest.pdf');
    expect((await send(PDF, 'application/pdf', { path: '/files?name=..%2F..%2Fetc%2Fpasswd' })).body.name).toBe('passwd');
    expect((await send(PNG, 'application/octet-stream')).body).toMatchObject({ name: 'upload.png', mimeType: 'image/png' });
    // A header without a readable filename names nothing.
    expect((await send(PDF, 'application/pdf', { path: '/files?name=b.pdf', headers: { 'content-disposition': 'attachment; filename="a' } })).body.name).toBe('b.pdf');
  });

  it('415 for another type, and for content that is not what its Content-Type says; nothing stored', async () => {
    const before = await fileRows();
    for (const [body, type] of [[HTML, 'text/html'], [HTML, 'image/png'], [PNG, 'application/pdf'], [Buffer.from('GIF89a....'), 'image/gif'], [PDF, null]] as const) {
      const p = expectProblem(await send(body, type), 415);
      expect(p.detail.length).toBeGreaterThan(20);
    }
    expectProblem(await send(Buffer.alloc(0), 'image/png'), 422);
    expect(await fileRows()).toBe(before);
  });

  it('413 above 10 MiB (declared or streamed); 10 MiB exactly is taken', async () => {
    const before = await fileRows();
    const big = Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024 + 1 - PDF.length, 0x20)]);
    const p = expectProblem(await send(big, 'application/pdf'), 413);
    expect(p.detail).toContain('10485760');
    expect(await fileRows()).toBe(before);
    const exact = Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024 - PDF.length, 0x20)]);
    expect((await send(exact, 'application/pdf')).status).toBe(201);
    // Streamed without a length: refused when the limit is passed.
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: h.port, method: 'POST', path: '/api/files', headers: { host: t.host, authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/pdf', 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(PDF);
      for (let i = 0; i < 11; i++) req.write(Buffer.alloc(1024 * 1024, 0x20));
      req.end();
    });
    expect(streamed).toBe(413);
  });

  it('an upload cut off by the client stores nothing', async () => {
    const before = await fileRows();
    await new Promise<void>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port: h.port, method: 'POST', path: '/api/files', headers: { host: t.host, authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/pdf', 'content-length': String(100_000) } });
      req.on('error', () => resolve());
      req.write(PDF);
      setTimeout(() => { req.destroy(); resolve(); }, 200);
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(await fileRows()).toBe(before);
  });

  it('organisers, read tokens and anonymous callers may not upload', async () => {
    const org = await createOrganiser(t);
    expectProblem(await send(PNG, 'image/png', { token: await t.token({ role: 'organiser', organiserIds: [org.uuid] }) }), 403);
    expectProblem(await send(PNG, 'image/png', { token: await t.token({ access: 'read' }) }), 403);
    expectProblem(await t.request('POST', '/files', { rawBody: PNG, headers: { 'content-type': 'image/png' }, token: null }), 401);
  });

  it('the same Idempotency-Key with other bytes is another request (422), with the same bytes a replay', async () => {
    const key = { 'idempotency-key': `files-${Math.random()}` };
    const first = await send(PNG, 'image/png', { headers: key });
    expect(first.status).toBe(201);
    const again = await send(PNG, 'image/png', { headers: key });
    expect(again.body.uuid).toBe(first.body.uuid);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expectProblem(await send(JPEG, 'image/jpeg', { headers: key }), 422);
  });
});

describe('GET /files/{uuid} and the application\'s files', () => {
  const QUESTION = { label: 'Impfpass', type: 'file', required: false };

  async function answered() {
    const org = await createOrganiser(t);
    const edition = await firstcome(t, { releaseParticipantLists: true });
    const offer = await createOffer(t, { edition: edition.uuid, hosts: [org.uuid], applicationQuestions: [QUESTION] });
    const question = offer.applicationQuestions![0].uuid;
    const a = await apply(t, offer.uuid, (await createParticipant(t)).uuid);
    const file = await upload(t, { bytes: PDF, type: 'application/pdf', name: 'impfpass.pdf' });
    const patched = await t.patch(`/attendances/${a.uuid}`, { answers: { [question]: file.uuid } });
    expect(patched.status, patched.text).toBe(200);
    return { org, offer, question, a: patched.body, file };
  }

  it('an answer names the file; the application lists it; admins read it as an attachment with nosniff', async () => {
    const { a, file, question } = await answered();
    expect(a.files).toEqual([{ uuid: file.uuid, question, name: 'impfpass.pdf', mimeType: 'application/pdf', size: PDF.length }]);
    expect(a.answers).toEqual([expect.objectContaining({ question, type: 'file', answer: file.uuid })]);
    const res = await t.request('GET', `/files/${file.uuid}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe('attachment; filename=impfpass.pdf');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.text).toBe(PDF.toString('utf8'));
    expect(res.headers.etag).toMatch(/^W\//);
    expect((await t.request('GET', `/files/${file.uuid}`, { headers: { 'if-none-match': res.headers.etag! } })).status).toBe(304);
  });

  it('organisers read the files of their released lists; others 403, unused uploads and unknown ids 404', async () => {
    const { org, file } = await answered();
    const own = await t.token({ role: 'organiser', organiserIds: [org.uuid] });
    expect((await t.request('GET', `/files/${file.uuid}`, { token: own })).status).toBe(200);
    const other = await createOrganiser(t);
    expectProblem(await t.request('GET', `/files/${file.uuid}`, { token: await t.token({ role: 'organiser', organiserIds: [other.uuid] }) }), 404);
    const unused = await upload(t);
    expectProblem(await t.request('GET', `/files/${unused.uuid}`, { token: own }), 404);
    expect((await t.request('GET', `/files/${unused.uuid}`)).status).toBe(200);
    expectProblem(await t.request('GET', '/files/00000000-0000-4000-8000-000000000000'), 404);
    expectProblem(await t.request('GET', '/files/not-an-id'), 404);
    const website = await t.token({ role: 'website' });
    expectProblem(await t.request('GET', `/files/${file.uuid}`, { token: website }), 403);
  });

  it('a file answer must name an unused upload of the municipality (422); replacing the answer deletes the old file', async () => {
    const { a, question, file } = await answered();
    const other = await answered();
    const p = expectProblem(await t.patch(`/attendances/${other.a.uuid}`, { answers: { [other.question]: file.uuid } }), 422);
    expect(p.violations?.[0]?.propertyPath).toBe(`answers.${other.question}`);
    expectProblem(await t.patch(`/attendances/${a.uuid}`, { answers: { [question]: '00000000-0000-4000-8000-000000000000' } }), 422);
    const replacement = await upload(t, { bytes: JPEG, type: 'image/jpeg', name: 'neu.jpg' });
    const res = await t.patch(`/attendances/${a.uuid}`, { answers: { [question]: replacement.uuid } });
    expect(res.body.files.map((f) => f.uuid)).toEqual([replacement.uuid]);
    expectProblem(await t.request('GET', `/files/${file.uuid}`), 404);
    const cleared = await t.patch(`/attendances/${a.uuid}`, { answers: { [question]: null } });
    expect(cleared.body.files).toEqual([]);
    expectProblem(await t.request('GET', `/files/${replacement.uuid}`), 404);
  });

  it('files go at pseudonymisation (D9: file answers are removed with the names)', async () => {
    const { offerEndedWeeksAgo } = await import('../retention/helpers.js');
    const { runRetention } = await import('../../../src/resources/retention/service.js');
    const ended = await offerEndedWeeksAgo(t, 13);
    const withQuestion = await t.patch(`/offers/${ended.uuid}`, { applicationQuestions: [QUESTION] });
    const question = withQuestion.body.applicationQuestions![0].uuid;
    const a = await apply(t, ended.uuid, (await createParticipant(t)).uuid, { status: 'confirmed' });
    const file = await upload(t, { bytes: PDF, type: 'application/pdf' });
    expect((await t.patch(`/attendances/${a.uuid}`, { answers: { [question]: file.uuid } })).status).toBe(200);
    const result = await runRetention(t.context(), {});
    expect(result.participantUuids).toContain(a.participant!.uuid);
    const after = await t.get(`/attendances/${a.uuid}`);
    expect(after.body).toMatchObject({ files: [], answers: [] });
    expectProblem(await t.request('GET', `/files/${file.uuid}`), 404);
  });

  it('files go with their application: delete, transfer, and the participant\'s deletion', async () => {
    const deleted = await answered();
    expect((await t.del(`/attendances/${deleted.a.uuid}`)).status).toBe(204);
    expectProblem(await t.request('GET', `/files/${deleted.file.uuid}`), 404);

    const moved = await answered();
    const target = await createOffer(t, { edition: moved.a.edition.uuid });
    const transferred = await t.post(`/attendances/${moved.a.uuid}/transfer`, { offer: target.uuid });
    expect(transferred.status, transferred.text).toBe(201);
    expect(transferred.body.files).toEqual([]);
    expectProblem(await t.request('GET', `/files/${moved.file.uuid}`), 404);

    const child = await answered();
    await transitionOk(t, child.a.uuid, 'withdraw');
    expect((await t.del(`/participants/${child.a.participant!.uuid}`)).status).toBe(204);
    expectProblem(await t.request('GET', `/files/${child.file.uuid}`), 404);
  });
});
