import jwt from 'jsonwebtoken';
import { TEST_JWT_SECRET } from './test-app.js';

/** Signs a bearer token as the app does (HS256, iss, aud, iat, exp in an hour) unless `options` says otherwise. */
export function signToken(claims: Record<string, unknown>, options: jwt.SignOptions = {}): string {
  return jwt.sign(claims, TEST_JWT_SECRET, { issuer: 'parley', audience: 'parley-api', expiresIn: 3600, ...options });
}
