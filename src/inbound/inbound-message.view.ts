import { ConversationView } from '../conversations/conversation.view.js';
import { MessageView } from '../messages/message.view.js';

export class InboundMessageResultView {
  message: MessageView;
  /** The conversation as it stands after the message (a duplicate: as it stands now) */
  conversation: ConversationView;
  /**
   * True when the externalId was already stored on the channel: this is that message, and nothing was stored
   * @example false
   */
  duplicate: boolean;
}

/** The Interface B envelope of a stored inbound message. */
export class InboundMessageEnvelope {
  /** @example true */
  success: true;
  data: InboundMessageResultView;
}
