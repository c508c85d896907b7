/**
 * One connection's authentication: the SCRAM conversation under way and, once it succeeded, the user. Reached
 * through `saslStart`/`saslContinue` and `hello`'s `speculativeAuthenticate` (the driver's one-round-trip start).
 * Every failure answers MongoDB's 18 AuthenticationFailed, whatever went wrong, so nothing tells a missing user
 * from a wrong password.
 */
import { Binary, type Document } from 'bson';
import { MongoCommandError } from '../errors.js';
import { AuthenticationFailed, ScramConversation } from './scram.js';
import type { UserStore } from './users.js';

export const MECHANISM = 'SCRAM-SHA-256';
const CONVERSATION_ID = 1;

const failed = () => new MongoCommandError(18, 'Authentication failed.');

function payloadText(body: Document): string {
  const payload = body.payload;
  if (!(payload instanceof Binary)) throw failed();
  return Buffer.from(payload.buffer).toString('utf8');
}

export class Authentication {
  /** The authenticated user, or null. */
  user: string | null = null;
  private conversation: ScramConversation | null = null;
  private skipEmptyExchange = false;
  /** The proof was accepted and the client asked for the final empty step (no skipEmptyExchange). */
  private finalStepPending = false;

  constructor(private readonly users: UserStore) {}

  saslStart(db: string, body: Document): Document {
    if (body.mechanism !== MECHANISM)
      throw new MongoCommandError(334, `Received authentication for mechanism ${String(body.mechanism)} which is unknown or not enabled (only ${MECHANISM})`);
    this.conversation = null;
    this.finalStepPending = false;
    try {
      const { conversation, serverFirst } = ScramConversation.start(this.users, db, payloadText(body));
      this.conversation = conversation;
      this.skipEmptyExchange = body.options?.skipEmptyExchange === true;
      return { conversationId: CONVERSATION_ID, done: false, payload: new Binary(Buffer.from(serverFirst)) };
    } catch (error) {
      if (error instanceof AuthenticationFailed) throw failed();
      throw error;
    }
  }

  saslContinue(body: Document): Document {
    if (this.finalStepPending) {
      this.finalStepPending = false;
      return { conversationId: CONVERSATION_ID, done: true, payload: new Binary(Buffer.alloc(0)) };
    }
    const conversation = this.conversation;
    this.conversation = null;
    if (!conversation || body.conversationId !== CONVERSATION_ID) throw new MongoCommandError(17, 'No SASL session state found');
    try {
      const serverFinal = conversation.finish(payloadText(body));
      this.user = conversation.user;
      this.finalStepPending = !this.skipEmptyExchange;
      return { conversationId: CONVERSATION_ID, done: this.skipEmptyExchange, payload: new Binary(Buffer.from(serverFinal)) };
    } catch (error) {
      if (error instanceof AuthenticationFailed) throw failed();
      throw error;
    }
  }
}
