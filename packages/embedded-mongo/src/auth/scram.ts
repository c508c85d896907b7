/**
 * The server side of a SCRAM-SHA-256 conversation (RFC 5802, RFC 7677) as MongoDB runs it over `saslStart` and
 * `saslContinue`: client-first `n,,n=<user>,r=<nonce>` → server-first `r=<nonce+ours>,s=<salt>,i=<iterations>` →
 * client-final `c=biws,r=<nonce>,p=<proof>` → server-final `v=<server signature>`. An unknown user gets a
 * plausible server-first (a salt derived from its name) and fails at the proof, like a wrong password.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hmac, sha256, type ScramCredential, type UserStore } from './users.js';

export class AuthenticationFailed extends Error {}

/** Per server: makes the fake salts of unknown users stable, and unpredictable across servers. */
const FAKE_SALT_KEY = randomBytes(32);
const DEFAULT_ITERATIONS = 15_000;

function attributes(message: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of message.split(',')) {
    const eq = part.indexOf('=');
    if (eq === 1) out.set(part[0], part.slice(2));
  }
  return out;
}

/** RFC 5802 saslname: "=2C" is a comma and "=3D" an equals sign. */
const decodeName = (name: string) => name.replace(/=2C/g, ',').replace(/=3D/g, '=');

export class ScramConversation {
  private done = false;

  private constructor(
    readonly user: string,
    private readonly credential: ScramCredential | undefined,
    private readonly clientFirstBare: string,
    private readonly serverFirst: string,
    private readonly nonce: string,
  ) {}

  /** Starts a conversation for database `db` from the client-first message; answers it and the server-first message. */
  static start(users: UserStore, db: string, clientFirst: string): { conversation: ScramConversation; serverFirst: string } {
    // gs2 header "n,," (no channel binding) then the bare message.
    if (!clientFirst.startsWith('n,,')) throw new AuthenticationFailed('SCRAM client-first message must start with "n,,"');
    const bare = clientFirst.slice(3);
    const attrs = attributes(bare);
    const user = attrs.get('n');
    const clientNonce = attrs.get('r');
    if (!user || !clientNonce) throw new AuthenticationFailed('SCRAM client-first message needs n= and r=');
    const name = decodeName(user);
    const credential = users.get(db, name);
    const salt = credential?.salt ?? hmac(FAKE_SALT_KEY, `${db}.${name}`).subarray(0, 28);
    const nonce = clientNonce + randomBytes(24).toString('base64');
    const serverFirst = `r=${nonce},s=${salt.toString('base64')},i=${credential?.iterations ?? DEFAULT_ITERATIONS}`;
    return { conversation: new ScramConversation(name, credential, bare, serverFirst, nonce), serverFirst };
  }

  /** Checks the client's proof; answers the server-final message. Throws AuthenticationFailed. */
  finish(clientFinal: string): string {
    if (this.done) throw new AuthenticationFailed('this SCRAM conversation is over');
    this.done = true;
    const proofAt = clientFinal.lastIndexOf(',p=');
    if (proofAt < 0) throw new AuthenticationFailed('SCRAM client-final message needs p=');
    const withoutProof = clientFinal.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    if (attrs.get('c') !== 'biws' || attrs.get('r') !== this.nonce) throw new AuthenticationFailed('SCRAM nonce or channel binding mismatch');
    const proof = Buffer.from(clientFinal.slice(proofAt + 3), 'base64');
    if (!this.credential || proof.length !== 32) throw new AuthenticationFailed('Authentication failed.');
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const signature = hmac(this.credential.storedKey, authMessage);
    const clientKey = Buffer.alloc(32);
    for (let i = 0; i < 32; i++) clientKey[i] = proof[i] ^ signature[i];
    if (!timingSafeEqual(sha256(clientKey), this.credential.storedKey)) throw new AuthenticationFailed('Authentication failed.');
    return `v=${hmac(this.credential.serverKey, authMessage).toString('base64')}`;
  }
}
