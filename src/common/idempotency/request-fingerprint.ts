import { BadRequestException } from '@nestjs/common';
import busboy from 'busboy';
import type { Request } from 'express';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MAX_BODY_DEPTH, TOO_DEEP } from '../body-shape.js';


/** Bounds what reading a multipart body for its fingerprint may hold; routes accept far less. */
const MULTIPART_LIMITS = { parts: 1000, fieldSize: 1024 * 1024 };

/**
 * What tells two request bodies apart for an Idempotency-Key: their content, not its encoding.
 * JSON (and form) bodies are compared as parsed, with object keys sorted, so whitespace and key order
 * do not count; multipart bodies by their parts in order (field names and values; file field, file
 * name and the SHA-256 of the bytes), so the boundary, which clients draw at random on each attempt,
 * does not count either.
 */
export interface BodyFingerprint {
  /** Reads the rest of the body, when nothing else will, and answers its fingerprint (null: unreadable). */
  read(): Promise<string | null>;
  /** The fingerprint of a body that was read in full by the route; null when part of it never arrived. */
  ofReceivedBody(): Promise<string | null>;
}

export function fingerprintBody(request: Request): BodyFingerprint {
  if (request.is('multipart')) return multipartFingerprint(request);
  const fingerprint = Promise.resolve(sha256(`json\n${canonicalJson(request.body ?? null, 0)}`));
  return { read: () => fingerprint, ofReceivedBody: () => fingerprint };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

/** JSON with object keys sorted. */
export function canonicalJson(value: unknown, depth: number): string {
  // A net (depth 0 is the body itself): the body-shape middleware refuses deeper bodies before any guard reads them.
  if (value !== null && typeof value === 'object' && depth >= MAX_BODY_DEPTH) throw new BadRequestException(TOO_DEEP);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key], depth + 1)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Parses the multipart body alongside the route's own reader (multer): the request is paused and this
 * listens to its 'data' events, which adds no reader of its own, so the bytes flow once the route pipes
 * the request and both see every chunk; nothing is held but the parts' names and digests.
 */
function multipartFingerprint(request: IncomingMessage): BodyFingerprint {
  const fingerprint = readMultipart(request);
  return {
    read: () => {
      request.resume();
      return fingerprint;
    },
    ofReceivedBody: () => (request.complete ? fingerprint : Promise.resolve(null)),
  };
}

function readMultipart(request: IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: request.headers, limits: MULTIPART_LIMITS, defParamCharset: 'utf8' });
    } catch {
      resolve(null);
      return;
    }
    // Parts in arrival order; a file's digest is filled in when its bytes end, which may come after the next part.
    const parts: Array<[kind: string, name: string, value: string]> = [];
    const onData = (chunk: Buffer) => parser.write(chunk);
    const onEnd = () => parser.end();
    const settle = (fingerprint: string | null) => {
      request.off('data', onData).off('end', onEnd).off('close', onClose);
      resolve(fingerprint);
    };
    const onClose = () => {
      if (!request.complete) settle(null);
    };
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) settle(null);
      parts.push(['field', name, value]);
    });
    parser.on('file', (name, file, info) => {
      const part: [string, string, string] = ['file', name, ''];
      parts.push(part);
      const digest = createHash('sha256');
      file.on('data', (chunk: Buffer) => digest.update(chunk));
      file.on('end', () => (part[2] = `${info.filename ?? ''}\n${digest.digest('base64url')}`));
    });
    parser.on('partsLimit', () => settle(null));
    parser.on('error', () => settle(null));
    parser.on('finish', () => settle(sha256(`multipart\n${JSON.stringify(parts)}`)));
    request.pause();
    request.on('data', onData).on('end', onEnd).on('close', onClose);
  });
}
