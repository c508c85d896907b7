/** File-system steps the data directory needs to make a new or renamed file durable. */
import { open } from 'node:fs/promises';
import { closeSync, fsyncSync, openSync } from 'node:fs';

/** Codes with which platforms that cannot fsync a directory (Windows) refuse to; there is nothing to do there. */
const UNSUPPORTED = new Set(['EISDIR', 'EPERM', 'EINVAL', 'EACCES']);

/** fsyncs a directory, so that a file created or renamed in it survives a crash. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    if (!UNSUPPORTED.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    await handle?.close();
  }
}

export function syncDirectorySync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (error) {
    if (!UNSUPPORTED.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
