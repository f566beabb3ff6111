import { describe, expect, it } from 'vitest';
import { answerFileName, answerFileType, MAX_ANSWER_FILE_BYTES } from '../../src/domain/answer-files.js';

// D11 "Files": PDF, PNG or JPEG, decided from the content; the declared type must agree (or be generic).
describe('answerFileType', () => {
  it.each([
    ['application/pdf', 'application/pdf', 'application/pdf'],
    ['image/png', 'image/png', 'image/png'],
    ['image/jpeg', 'image/jpeg', 'image/jpeg'],
    ['application/octet-stream', 'image/png', 'image/png'],
    ['image/png', 'application/pdf', null], // the content is another of the three
    ['image/png', null, null], // not one of the three at all (HTML, a script, ...)
    ['text/html', 'text/html', null],
    ['image/gif', 'image/gif', null],
    ['application/octet-stream', 'application/zip', null],
    [null, 'image/png', null], // no Content-Type
  ] as const)('declared %s, content %s -> %s', (declared, detected, stored) => {
    const v = answerFileType(declared, detected);
    expect(v.ok ? v.mimeType : null).toBe(stored);
    if (!v.ok) expect(v.reason.length).toBeGreaterThan(10);
  });
  it('allows 10 MiB', () => expect(MAX_ANSWER_FILE_BYTES).toBe(10_485_760));
});

describe('answerFileName', () => {
  it.each([
    ['impfpass.pdf', 'application/pdf', 'impfpass.pdf'],
    ['C:\\Users\\Emma\\Scan 1.png', 'image/png', 'Scan 1.png'],
    ['../../etc/passwd', 'application/pdf', 'passwd'],
    ['a"b\u0000\nc.jpg', 'image/jpeg', 'abc.jpg'],
    ['', 'image/jpeg', 'upload.jpg'],
    [null, 'application/pdf', 'upload.pdf'],
    ['..', 'image/png', 'upload.png'],
    ['ä'.repeat(300), 'image/png', 'ä'.repeat(200)],
  ] as const)('%j -> %j', (sent, type, name) => {
    expect(answerFileName(sent, type)).toBe(name);
  });
});
