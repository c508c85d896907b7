/**
 * How often the process's one scheduler clock (LaneWorker) looks for due lanes when nothing in this process said
 * so, and calls its poll listeners (the event feed's open streams). Its own file: configuration reads it too.
 */
export const POLL_INTERVAL_MS = 250;
