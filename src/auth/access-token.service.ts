import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { Role } from './auth-principal.js';

/** Claims of the bearer token (contract section 2); `iat` and `exp` are added by the signer. */
export interface AccessTokenClaims {
  sub: string;
  companyId: string;
  role: Role;
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
    return { accessToken: this.jwt.sign({ ...claims }, { expiresIn }), tokenType: 'Bearer', expiresIn };
  }
}
