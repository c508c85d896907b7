// Standard Webhooks signature check, as a receiver would do it (README, "Verifying a signature").
import { createHmac, timingSafeEqual } from 'node:crypto';

const TOLERANCE_SECONDS = 300;

/** `request` as recorded by the receiver: freshness is judged at its arrival, `at` (ms). */
export function signatureValid(secret, { headers, body, at }) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) return false;
  if (Math.abs(at / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((candidate) => {
    if (!candidate.startsWith('v1,')) return false;
    const given = Buffer.from(candidate.slice(3), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
