import { ContactView } from '../contacts/contact.view.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { MessageView } from './message.view.js';

/** The answer of `POST /v1/messages`. */
export class ProactiveMessageView {
  message: MessageView;
  /** The conversation as it stands after the message: the contact's open one on the channel, or the one opened for it */
  conversation: ConversationView;
  /** The contact, found or created */
  contact: ContactView;
}
