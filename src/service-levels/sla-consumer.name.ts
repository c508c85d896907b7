/** The SLA consumer's name (SlaConsumer): its position in each company's log, and what settings nudge when business hours change. */
export const SLA_CONSUMER = 'service-levels';
