import { ContactView } from '../contacts/contact.view.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { MessageView } from '../messages/message.view.js';

/** A message as a transcript shows it: with its sender's name. */
export class TranscriptMessageView extends MessageView {
  /**
   * The contact's name (else phone, else e-mail), the agent's name, or "Bot"
   * @example Grace Hopper
   */
  senderName: string;
}

/** GET /conversations/{id}/transcript?format=json */
export class TranscriptView {
  conversation: ConversationView;
  /** null once the contact has been deleted */
  contact: ContactView | null;
  /** Every message, oldest first (private notes only with includePrivate=true) */
  messages: TranscriptMessageView[];
}
