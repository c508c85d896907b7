// Types of build-stamp.mjs, for its unit test.
export declare function isStampCurrent(stampFile: string, files: readonly string[]): boolean;
export declare function writeStamp(stampFile: string, files: readonly string[]): void;
