import { MessageView } from '../messages/message.view.js';
import { AgentConversationView } from './agent-conversation.view.js';

/** A message a search found, with its conversation as you see it (to show the hit in context and open it). */
export class MessageSearchHitView {
  message: MessageView;
  conversation: AgentConversationView;
}
