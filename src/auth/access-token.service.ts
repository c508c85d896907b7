import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { Role } from './auth-principal.js';

/** Who issues the bearer tokens and whom they are for (`iss`, `aud`): a token of anything else is refused. */
export const TOKEN_ISSUER = 'parley';
export const TOKEN_AUDIENCE = 'parley-api';

/** Claims of the bearer token (contract section 2); `iat`, `exp`, `iss` and `aud` are added by the signer. */
export interface AccessTokenClaims {
  sub: string;
  companyId: string;
  role: Role;
  /** The agent's tokenVersion when the token was issued. */
  ver: number;
}

export interface IssuedToken {
  accessToken: string;
  tokenType: 'Bearer';
  /** Seconds until the token expires. */
  expiresIn: number;
}

@Injectable()
export class AccessTokenService {
  constructor(private readonly jwt: JwtService) {}

  issue(claims: AccessTokenClaims, expiresIn: number): IssuedToken {
    return { accessToken: this.jwt.sign({ ...claims }, { expiresIn, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE }), tokenType: 'Bearer', expiresIn };
  }
}
