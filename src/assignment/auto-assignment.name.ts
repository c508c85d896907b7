/** The auto-assignment consumer's name, in a module of its own so that settings can nudge it without importing assignment. */
export const AUTO_ASSIGNMENT = 'auto-assignment';
