const DEFAULT_CHANNEL = 'api';

/** A channel as stored and compared: channels are matched case-insensitively, and `api` when none is given. */
export function channelOf(given: string | undefined): string {
  return (given ?? DEFAULT_CHANNEL).toLowerCase();
}
