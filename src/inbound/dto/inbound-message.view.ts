import { ApiProperty } from '@nestjs/swagger';
import { ConversationView } from '../../conversations/conversation.view.js';
import { MessageView } from '../../messages/message.view.js';

export class InboundMessageResultView {
  @ApiProperty({ type: MessageView }) message: MessageView;
  @ApiProperty({ type: ConversationView, description: 'The conversation as it stands after the message' })
  conversation: ConversationView;
}

/** The Interface B envelope of a stored inbound message. */
export class InboundMessageEnvelope {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: InboundMessageResultView }) data: InboundMessageResultView;
}
