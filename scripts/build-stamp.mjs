// Whether a build step's output is still what its inputs give: a stamp file holds a digest of the step's files (its
// inputs and its output, names and contents), written after the step ran. The step runs again when any of them
// differs, appears or goes (a changed source, an output edited or checked out by hand, a missing stamp).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/** A digest of `files` (absolute paths, in a stable order): a line for each, its path and its contents' digest. */
function digestFiles(files) {
  return sha256(files.map((file) => `${file}\t${existsSync(file) ? sha256(readFileSync(file)) : 'missing'}\n`).join(''));
}

/** True when `stampFile` holds the digest `files` have now: the step need not run. */
export function isStampCurrent(stampFile, files) {
  return existsSync(stampFile) && readFileSync(stampFile, 'utf8') === digestFiles(files);
}

/** Records the digest `files` have now, once the step has run. */
export function writeStamp(stampFile, files) {
  mkdirSync(dirname(stampFile), { recursive: true });
  writeFileSync(stampFile, digestFiles(files));
}
