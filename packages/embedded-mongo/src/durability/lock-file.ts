/**
 * `engine.lock`: only one engine may open a data directory. The lock file is created exclusively and names its
 * holder (pid, host, the process's start time where /proc tells it). A lock left by a process that no longer runs
 * (kill -9, power loss) is taken over; one whose holder still runs, or runs on another host, refuses the start.
 */
import { readFileSync, renameSync, unlinkSync, writeFileSync, fsyncSync, openSync, closeSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

export const LOCK_FILE = 'engine.lock';

interface Holder {
  pid: number;
  host: string;
  /** Start time of the process in clock ticks since boot (Linux), which tells a reused pid apart. */
  started?: string;
}

/** Data directories locked by this process, so a second engine in the same process is refused too. */
const lockedHere = new Set<string>();

export class DataDirectoryInUseError extends Error {}

function processStart(pid: number): string | undefined {
  try {
    // Field 22 of /proc/<pid>/stat, counted after the command name, which may contain spaces and parentheses.
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19];
  } catch {
    return undefined;
  }
}

function isRunning(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const started = processStart(holder.pid);
  return holder.started === undefined || started === undefined || started === holder.started;
}

function readHolder(path: string): Holder | null {
  try {
    const holder = JSON.parse(readFileSync(path, 'utf8')) as Holder;
    return Number.isInteger(holder.pid) && typeof holder.host === 'string' ? holder : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
    return null; // unreadable: a holder that crashed while writing it
  }
}

export class LockFile {
  private constructor(
    private readonly path: string,
    private readonly key: string,
  ) {}

  /** Takes the directory's lock or throws DataDirectoryInUseError saying who holds it. */
  static acquire(dir: string): LockFile {
    const key = realpathSync(dir);
    const path = join(dir, LOCK_FILE);
    const me: Holder = { pid: process.pid, host: hostname(), started: processStart(process.pid) };
    for (let attempt = 0; attempt < 3; attempt++) {
      if (lockedHere.has(key)) throw inUse(dir, path, me, 'another engine in this process');
      try {
        const fd = openSync(path, 'wx');
        try {
          writeFileSync(fd, JSON.stringify(me));
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        lockedHere.add(key);
        return new LockFile(path, key);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let holder: Holder | null;
      try {
        holder = readHolder(path);
      } catch {
        continue; // released meanwhile
      }
      if (holder && holder.host !== me.host) throw inUse(dir, path, holder, `process ${holder.pid} on host ${holder.host}`);
      if (holder && holder.pid !== process.pid && isRunning(holder)) throw inUse(dir, path, holder, `process ${holder.pid}`);
      // Stale: moved aside rather than deleted, so that of two processes taking it over at once only one succeeds.
      try {
        renameSync(path, `${path}.stale-${process.pid}`);
        unlinkSync(`${path}.stale-${process.pid}`);
      } catch {
        // someone else moved it first: try again
      }
    }
    throw new DataDirectoryInUseError(`could not take the lock ${path}: it keeps changing hands`);
  }

  release(): void {
    lockedHere.delete(this.key);
    try {
      unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}

function inUse(dir: string, path: string, holder: Holder, who: string): DataDirectoryInUseError {
  return new DataDirectoryInUseError(
    `the data directory ${dir} is in use by ${who} (lock file ${path}): only one engine may open it. ` +
      `Stop that one, or use another directory.${holder.host === hostname() ? '' : ' If that process is gone, delete the lock file.'}`,
  );
}
