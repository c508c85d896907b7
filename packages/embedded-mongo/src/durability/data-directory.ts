/**
 * A data directory: `engine.lock`, `snapshot.bin` and the journal files. Opening it takes the lock, recovers the
 * state (the snapshot, then every journal record after the snapshot's LSN, in order; a torn or damaged tail of the
 * last journal file is cut off and reported) and attaches the journal to the engine. A snapshot is taken when the
 * journal has grown past `journalSizeLimit` and at a clean close, after which the journal files it covers go.
 */
import { closeSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { applyChange, type Change } from '../storage/changes.js';
import type { Engine } from '../storage/engine.js';
import { syncDirectorySync } from './files.js';
import { decode, RecordReader } from './framing.js';
import { Journal, JOURNAL_FILE } from './journal.js';
import { LockFile } from './lock-file.js';
import { capture, loadSnapshot, writeSnapshot } from './snapshot.js';

export const DEFAULT_JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024;

export class DamagedJournalError extends Error {}

export interface DataDirectoryOptions {
  /** Journal bytes after which a snapshot is taken and the journal starts over. */
  journalSizeLimit?: number;
  log: (line: string) => void;
}

interface JournalFileInfo {
  name: string;
  firstLsn: number;
  bytes: number;
}

export class DataDirectory {
  private snapshotting: Promise<void> | null = null;
  private readonly journalSizeLimit: number;

  private constructor(
    readonly dir: string,
    private readonly engine: Engine,
    private readonly journal: Journal,
    private readonly lock: LockFile,
    private readonly options: DataDirectoryOptions,
  ) {
    this.journalSizeLimit = options.journalSizeLimit ?? DEFAULT_JOURNAL_SIZE_LIMIT;
    journal.onFlushed = () => {
      if (journal.bytesSinceSnapshot >= this.journalSizeLimit) void this.snapshot();
    };
    engine.changeLog = journal;
  }

  /** Locks and recovers `dir` (created if missing) into `engine`, which must be empty. */
  static open(dir: string, engine: Engine, options: DataDirectoryOptions): DataDirectory {
    // A new directory's own entry must be durable too before anything in it is acknowledged.
    if (mkdirSync(dir, { recursive: true }) !== undefined) syncDirectorySync(dirname(resolve(dir)));
    const lock = LockFile.acquire(dir);
    try {
      const started = Date.now();
      const snapshot = loadSnapshot(dir, engine);
      const replay = replayJournal(dir, engine, snapshot.lsn, options.log);
      const documents = [...engine.databases.values()].reduce((n, db) => n + [...db.collections.values()].reduce((m, c) => m + c.docs.size, 0), 0);
      options.log(
        `embedded-mongo: recovered ${dir} in ${Date.now() - started} ms: snapshot at LSN ${snapshot.lsn} ` +
          `(${snapshot.documents} documents), ${replay.records} journal records replayed, now ${documents} documents`,
      );
      return new DataDirectory(dir, engine, new Journal(dir, replay.lsn, replay.last), lock, options);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** Starts a snapshot unless one is running; resolves when it is done (failures are logged, the journal kept). */
  snapshot(): Promise<void> {
    this.snapshotting ??= this.takeSnapshot().finally(() => (this.snapshotting = null));
    return this.snapshotting;
  }

  /** Waits for pending writes, snapshots if the journal holds anything, closes the journal, releases the lock. */
  async close(): Promise<void> {
    await this.snapshotting;
    if (this.journal.bytesSinceSnapshot > 0) await this.snapshot();
    await this.journal.close();
    this.engine.changeLog = null;
    this.lock.release();
  }

  private async takeSnapshot(): Promise<void> {
    const started = Date.now();
    // One synchronous step: the captured state and the journal's new file start at the same LSN.
    const state = capture(this.engine, this.journal.lsn);
    this.journal.rotate();
    try {
      const bytes = await writeSnapshot(this.dir, state);
      await this.journal.deleteRetired();
      this.options.log(`embedded-mongo: snapshot at LSN ${state.lsn} written (${bytes} bytes, ${Date.now() - started} ms)`);
    } catch (error) {
      this.options.log(`embedded-mongo: snapshot at LSN ${state.lsn} failed, the journal is kept: ${(error as Error).message}`);
    }
  }
}

/** The journal files in LSN order. */
function journalFiles(dir: string): JournalFileInfo[] {
  return readdirSync(dir)
    .map((name) => ({ name, match: JOURNAL_FILE.exec(name) }))
    .filter((f) => f.match)
    .map((f) => ({ name: f.name, firstLsn: Number(f.match![1]), bytes: statSync(join(dir, f.name)).size }))
    .sort((a, b) => a.firstLsn - b.firstLsn);
}

/**
 * Replays the records after `fromLsn`. Journal files wholly covered by the snapshot are deleted. A file that stops
 * at an invalid record is cut there if it is the last one (a write torn by the crash, never acknowledged); an
 * invalid record in an earlier file, or a gap in the LSNs, is damage and stops the start.
 */
function replayJournal(dir: string, engine: Engine, fromLsn: number, log: (line: string) => void) {
  const files = journalFiles(dir);
  // A file a rotation created and nothing was written to yet: the previous one, whose last records may have been
  // torn by the crash, is then the last file (its records are flushed before any of the new file's).
  while (files.length > 1 && files.at(-1)!.bytes === 0) unlinkSync(join(dir, files.pop()!.name));
  let lsn = fromLsn;
  let records = 0;
  let last: JournalFileInfo | null = null;
  for (let i = 0; i < files.length; i++) {
    const file = files[i];
    const path = join(dir, file.name);
    const next = files[i + 1];
    if (next && next.firstLsn <= fromLsn + 1) {
      unlinkSync(path);
      continue;
    }
    if (file.firstLsn > lsn + 1) throw new DamagedJournalError(`${path} starts at LSN ${file.firstLsn}, but the data before it ends at LSN ${lsn}`);
    const reader = new RecordReader(path);
    try {
      for (let payload = reader.next(); payload; payload = reader.next()) {
        const { lsn: storedLsn, ...change } = decode(payload);
        const recordLsn = Number(storedLsn);
        if (recordLsn <= lsn) continue;
        if (recordLsn !== lsn + 1) throw new DamagedJournalError(`${path} jumps from LSN ${lsn} to ${recordLsn}`);
        applyChange(engine, change as Change);
        lsn = recordLsn;
        records += 1;
      }
    } finally {
      reader.close();
    }
    if (reader.problem) {
      if (next) throw new DamagedJournalError(`${path} has ${reader.problem} at byte ${reader.offset}, before the last journal file`);
      log(
        `embedded-mongo: ${file.name} ends with ${reader.problem} at byte ${reader.offset}: ` +
          `the ${reader.size - reader.offset} bytes from there were never acknowledged and are dropped`,
      );
      truncateDurably(path, reader.offset);
    }
    last = { ...file, bytes: reader.offset };
  }
  return { lsn, records, last };
}

function truncateDurably(path: string, size: number): void {
  const fd = openSync(path, 'r+');
  try {
    ftruncateSync(fd, size);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
