// Types of crafted-flows.mjs, for the unit tests that use the same crafted keywords as the drill.
export declare const CRAFTED_FLOWS: number;
export declare const KEYWORDS_PER_FLOW: number;
export declare const CRAFTED: Record<'lengths' | 'boundaries', { message: string; keywords: (flow: number) => string[] }>;
