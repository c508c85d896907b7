import { describe, expect, it } from '@jest/globals';
import { BadRequestException } from '@nestjs/common';
import type { Request } from 'express';
import { PassThrough } from 'node:stream';
import { canonicalJson, fingerprintBody } from './request-fingerprint.js';

type Part = { name: string; value: string } | { name: string; filename: string; content: Buffer };

function multipart(boundary: string, parts: Part[]): Buffer {
  const pieces = parts.map((part) =>
    'filename' in part
      ? Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n` +
              'Content-Type: application/octet-stream\r\n\r\n',
          ),
          part.content,
          Buffer.from('\r\n'),
        ])
      : Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`),
  );
  return Buffer.concat([...pieces, Buffer.from(`--${boundary}--\r\n`)]);
}

/** A request as the fingerprint reads it: a stream with headers, `complete` once it has ended. */
function requestOf(contentType: string): Request & PassThrough {
  const stream = new PassThrough();
  const request = Object.assign(stream, {
    headers: { 'content-type': contentType },
    complete: false,
    is: (type: string) => (type === 'multipart' && contentType.startsWith('multipart/') ? 'multipart' : false),
  });
  stream.once('end', () => (request.complete = true));
  return request as unknown as Request & PassThrough;
}

/** Sends the body in chunks of `size` bytes, then reads its fingerprint as a repeat does. */
async function fingerprintOf(boundary: string, parts: Part[], size: number): Promise<string | null> {
  const request = requestOf(`multipart/form-data; boundary=${boundary}`);
  const fingerprint = fingerprintBody(request);
  const body = multipart(boundary, parts);
  for (let offset = 0; offset < body.length; offset += size) request.write(body.subarray(offset, offset + size));
  request.end();
  return fingerprint.read();
}

const file = Buffer.from(Array.from({ length: 3000 }, (_, index) => index % 251));
const upload: Part[] = [
  { name: 'conversationId', value: '6650f0c2a1b2c3d4e5f60718' },
  { name: 'file', filename: 'receipt.pdf', content: file },
  { name: 'caption', value: 'Your receipt' },
];

describe('fingerprintBody', () => {
  it('gives a multipart body the same fingerprint whatever its boundary and however it is chunked', async () => {
    const whole = await fingerprintOf('boundary-one', upload, 1 << 20);
    expect(whole).toMatch(/^[\w-]{43}$/);
    expect(await fingerprintOf('----another-boundary-2', upload, 7)).toBe(whole);
    expect(await fingerprintOf('x', upload, 1)).toBe(whole);
  });

  it.each([
    ['a field value', [upload[0], upload[1], { name: 'caption', value: 'Your invoice' }]],
    ['a byte of the file', [upload[0], { ...upload[1], content: Buffer.concat([file.subarray(1), Buffer.from([0])]) }, upload[2]]],
    ['the file name', [upload[0], { ...upload[1], filename: 'invoice.pdf' }, upload[2]]],
    ['the order of the parts', [upload[1], upload[0], upload[2]]],
    ['a missing part', [upload[0], upload[1]]],
  ] as Array<[string, Part[]]>)('tells apart a multipart body that differs in %s', async (_, parts) => {
    expect(await fingerprintOf('b', parts, 64)).not.toBe(await fingerprintOf('b', upload, 64));
  });

  it('answers null for a multipart body that ends before its closing boundary', async () => {
    const request = requestOf('multipart/form-data; boundary=b');
    const fingerprint = fingerprintBody(request);
    request.end(multipart('b', upload).subarray(0, 200));
    expect(await fingerprint.read()).toBeNull();
  });

  it('answers null, without waiting, for a body the route did not read to its end', async () => {
    const request = requestOf('multipart/form-data; boundary=b');
    const fingerprint = fingerprintBody(request);
    request.write(multipart('b', upload).subarray(0, 200));
    expect(await fingerprint.ofReceivedBody()).toBeNull();
  });

  it('compares a parsed body by content: key order does not count, values and types do', async () => {
    const of = (body: unknown) => fingerprintBody({ is: () => false, body } as unknown as Request).read();
    expect(await of({ text: 'hi', from: { phone: '+1', name: 'A' } })).toBe(await of({ from: { name: 'A', phone: '+1' }, text: 'hi' }));
    expect(await of({ n: 1 })).not.toBe(await of({ n: '1' }));
    expect(await of(['a', 'b'])).not.toBe(await of(['b', 'a']));
    expect(await of(undefined)).toBe(await of(null));
  });
});

describe('canonicalJson', () => {
  it('sorts object keys at every level and keeps arrays in order', () => {
    expect(canonicalJson({ b: [{ d: 1, c: null }], a: 'x' }, 0)).toBe('{"a":"x","b":[{"c":null,"d":1}]}');
  });

  it('refuses a body nested deeper than the validation pipe allows', () => {
    let deep: unknown = 'leaf';
    for (let level = 0; level < 40; level += 1) deep = [deep];
    expect(() => canonicalJson(deep, 0)).toThrow(BadRequestException);
  });
});
