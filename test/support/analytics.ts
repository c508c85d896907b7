/** The figures of an empty metrics bucket (and of the totals of an empty range): zero counts, null averages. */
export const EMPTY_FIGURES = {
  conversationsCreated: 0,
  conversationsClosed: 0,
  messagesReceived: 0,
  messagesSent: 0,
  messagesDelivered: 0,
  messagesRead: 0,
  messagesFailed: 0,
  flowsExecuted: 0,
  avgFirstResponseSeconds: null,
  avgResolutionSeconds: null,
  slaBreaches: 0,
  slaMet: 0,
  csatResponses: 0,
  csatAverage: null,
};
