import { ConversationView } from '../conversations/conversation.view.js';
import { MessageView } from '../messages/message.view.js';

export class InboundMessageResultView {
  message: MessageView;
  /** The conversation as it stands after the message */
  conversation: ConversationView;
}

/** The Interface B envelope of a stored inbound message. */
export class InboundMessageEnvelope {
  /** @example true */
  success: true;
  data: InboundMessageResultView;
}
