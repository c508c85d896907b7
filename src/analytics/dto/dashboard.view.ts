import { ApiProperty } from '@nestjs/swagger';

export class DashboardConversationsView {
  @ApiProperty({ example: 14 }) bot: number;
  @ApiProperty({ example: 23 }) human: number;
  @ApiProperty({ example: 5 }) queued: number;
}

export class DashboardQueueView {
  @ApiProperty({ example: 5, description: 'Conversations waiting in the queue' })
  length: number;

  @ApiProperty({ example: 312, description: 'Whole seconds the longest-waiting one has been queued (since it last entered the queue); 0 when empty' })
  oldestWaitingSeconds: number;
}

export class DashboardAgentsView {
  @ApiProperty({ example: 6 }) online: number;
  @ApiProperty({ example: 1 }) away: number;
  @ApiProperty({ example: 2 }) busy: number;
  @ApiProperty({ example: 4 }) offline: number;
}

export class DashboardMessagesView {
  @ApiProperty({ example: 182 }) received: number;
  @ApiProperty({ example: 240 }) sent: number;
}

export class DashboardView {
  @ApiProperty({ type: DashboardConversationsView, description: 'Open conversations by status, right now' })
  conversations: DashboardConversationsView;

  @ApiProperty({ example: 31, description: 'Conversations closed today' })
  closedToday: number;

  @ApiProperty({ type: DashboardQueueView })
  queue: DashboardQueueView;

  @ApiProperty({ type: DashboardAgentsView, description: 'Active agents by status; deactivated agents are left out' })
  agents: DashboardAgentsView;

  @ApiProperty({ type: DashboardMessagesView, description: 'Messages today, inbound and outbound' })
  messagesToday: DashboardMessagesView;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 48.2,
    description:
      'Mean seconds from creation to first response of the conversations first answered today; null when none. ' +
      'Millisecond precision',
  })
  avgFirstResponseSecondsToday: number | null;

  @ApiProperty({ format: 'date-time', description: 'When these figures were computed' })
  generatedAt: string;
}
