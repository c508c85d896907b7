/**
 * The users a server started with `--auth` accepts, as SCRAM-SHA-256 credentials (RFC 7677): only the salt, the
 * iteration count and the derived StoredKey and ServerKey are kept, never the password. Users belong to the `admin`
 * database, as MongoDB's own administrative users do (`?authSource=admin`), and may run every command.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/** MongoDB's default for SCRAM-SHA-256 (scramSHA256IterationCount). */
const ITERATIONS = 15_000;
const SALT_BYTES = 28;

export interface ScramCredential {
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

export interface UserPassword {
  user: string;
  password: string;
}

export const hmac = (key: Buffer, text: string | Buffer) => createHmac('sha256', key).update(text).digest();
export const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();

/** RFC 4013 characters mapped to nothing (B.1) and non-ASCII spaces mapped to a space (C.1.2). */
const MAPPED_TO_NOTHING = /[\u00AD\u034F\u1806\u180B-\u180D\u200B-\u200D\u2060\uFE00-\uFE0F\uFEFF]/g;
const NON_ASCII_SPACE = /[\u00A0\u1680\u2000-\u200B\u202F\u205F\u3000]/g;
const PROHIBITED = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\uE000-\uF8FF\uFFF9-\uFFFD]/;

/** SASLprep (RFC 4013) of a password, as the driver applies it before deriving SCRAM-SHA-256 keys. */
export function saslPrep(password: string): string {
  const prepared = password.replace(NON_ASCII_SPACE, ' ').replace(MAPPED_TO_NOTHING, '').normalize('NFKC');
  if (PROHIBITED.test(prepared)) throw new Error('a password may not contain control or private-use characters');
  return prepared;
}

export function deriveCredential(password: string, salt = randomBytes(SALT_BYTES), iterations = ITERATIONS): ScramCredential {
  const salted = pbkdf2Sync(saslPrep(password), salt, iterations, 32, 'sha256');
  return { iterations, salt, storedKey: sha256(hmac(salted, 'Client Key')), serverKey: hmac(salted, 'Server Key') };
}

export class UserStore {
  private readonly users = new Map<string, ScramCredential>();

  constructor(users: UserPassword[]) {
    for (const { user, password } of users) {
      if (!user) throw new Error('a user needs a name');
      if (!password) throw new Error(`user ${user} needs a password`);
      if (this.users.has(user)) throw new Error(`user ${user} is given twice`);
      this.users.set(user, deriveCredential(password));
    }
    if (this.users.size === 0) throw new Error('--auth needs at least one user (--user name:password or --users-file)');
  }

  /** The credential of `user` in database `db`; users exist only in `admin`. */
  get(db: string, user: string): ScramCredential | undefined {
    return db === 'admin' ? this.users.get(user) : undefined;
  }
}

/** `name:password` (the password may contain colons). */
export function parseUser(spec: string): UserPassword {
  const colon = spec.indexOf(':');
  if (colon <= 0) throw new Error(`a user is given as name:password, got "${spec.slice(0, 40)}"`);
  return { user: spec.slice(0, colon), password: spec.slice(colon + 1) };
}

/** A users file: one `name:password` per line; blank lines and lines starting with # are ignored. */
export function parseUsersFile(text: string): UserPassword[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map(parseUser);
}
