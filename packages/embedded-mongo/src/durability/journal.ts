/**
 * The append-only journal of a data directory, with group commit. Every change gets the next sequence number (LSN)
 * and is framed into memory at once; a flush writes everything framed so far and fsyncs it, and whatever arrives
 * while a flush is in flight joins the next one, so concurrent writers share one fsync. A write is acknowledged only
 * once its LSN is durable (`whenDurable`). The journal is a series of files, `journal-<first LSN>.bin`: a snapshot
 * starts a new one (`rotate`) and deletes those it covers once it is itself on disk.
 */
import { closeSync, fdatasync, openSync, unlinkSync, write } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MongoCommandError } from '../errors.js';
import type { Change, ChangeLog } from '../storage/changes.js';
import { frame } from './framing.js';
import { syncDirectory } from './files.js';

const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);

export const journalFileName = (firstLsn: number) => `journal-${String(firstLsn).padStart(16, '0')}.bin`;
export const JOURNAL_FILE = /^journal-(\d{16})\.bin$/;

interface JournalFile {
  fd: number;
  name: string;
  firstLsn: number;
  /** Whether the directory entry of a new file has been fsynced. */
  listed: boolean;
}

interface PendingGroup {
  file: JournalFile;
  buffers: Buffer[];
  lastLsn: number;
}

interface Waiter {
  lsn: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class Journal implements ChangeLog {
  private current: JournalFile;
  private retired: JournalFile[] = [];
  private pending: PendingGroup[] = [];
  private waiters: Waiter[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;
  private failure: Error | null = null;
  durableLsn: number;
  /** Bytes written to the journal since the last snapshot started. */
  bytesSinceSnapshot: number;
  /** Called after each flush (the data directory checks whether a snapshot is due). */
  onFlushed: () => void = () => {};

  /**
   * Continues the journal at `lsn + 1`, appending to `file` (the last journal file, already cut after its last
   * valid record) or, without one, to a new file.
   */
  constructor(
    private readonly dir: string,
    public lsn: number,
    file: { name: string; firstLsn: number; bytes: number } | null,
  ) {
    this.durableLsn = lsn;
    this.current = file ? { fd: openSync(join(dir, file.name), 'a'), name: file.name, firstLsn: file.firstLsn, listed: true } : this.createFile(lsn + 1);
    this.bytesSinceSnapshot = file?.bytes ?? 0;
  }

  record(change: Change): void {
    if (this.failure) throw journalError(this.failure);
    const record = frame({ lsn: this.lsn + 1, ...change });
    this.lsn += 1;
    this.bytesSinceSnapshot += record.length;
    const last = this.pending.at(-1);
    if (last && last.file === this.current) {
      last.buffers.push(record);
      last.lastLsn = this.lsn;
    } else {
      this.pending.push({ file: this.current, buffers: [record], lastLsn: this.lsn });
    }
    this.schedule();
  }

  /** Null when `lsn` is durable already; else a promise resolved once it is (rejected if the journal failed). */
  whenDurable(lsn: number): Promise<void> | null {
    if (this.failure) return Promise.reject(journalError(this.failure));
    if (lsn <= this.durableLsn) return null;
    return new Promise((resolve, reject) => this.waiters.push({ lsn, resolve, reject }));
  }

  /** Resolves once everything recorded so far is durable. */
  async flush(): Promise<void> {
    await this.whenDurable(this.lsn);
  }

  /** Starts a new journal file for the changes after the current LSN (a snapshot is about to cover the rest). */
  rotate(): void {
    this.retired.push(this.current);
    this.current = this.createFile(this.lsn + 1);
    this.bytesSinceSnapshot = 0;
  }

  /** Closes and deletes the files `rotate` retired, once what they hold is on disk (the snapshot covers it). */
  async deleteRetired(): Promise<void> {
    await this.flush();
    for (const file of this.retired.splice(0)) {
      closeSync(file.fd);
      unlinkSync(join(this.dir, file.name));
    }
  }

  /** Flushes, then closes the files; records after this throw. */
  async close(): Promise<void> {
    await this.flush().catch(() => {});
    for (const file of [...this.retired.splice(0), this.current]) closeSync(file.fd);
    this.failure ??= new Error('the journal is closed');
  }

  private createFile(firstLsn: number): JournalFile {
    const name = journalFileName(firstLsn);
    return { fd: openSync(join(this.dir, name), 'a'), name, firstLsn, listed: false };
  }

  /** The flush starts after the current turn of the event loop, so the changes of every command it ran share it. */
  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushing ??= this.flushLoop().finally(() => (this.flushing = null));
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.pending.length && !this.failure) {
      const groups = this.pending;
      this.pending = [];
      try {
        for (const group of groups) {
          await writeFully(group.file.fd, Buffer.concat(group.buffers));
          if (!group.file.listed) {
            await syncDirectory(this.dir);
            group.file.listed = true;
          }
          await datasyncAsync(group.file.fd);
        }
      } catch (error) {
        this.fail(error as Error);
        return;
      }
      this.durableLsn = groups.at(-1)!.lastLsn;
      while (this.waiters.length && this.waiters[0].lsn <= this.durableLsn) this.waiters.shift()!.resolve();
      this.onFlushed();
    }
  }

  private fail(error: Error): void {
    this.failure = error;
    for (const waiter of this.waiters.splice(0)) waiter.reject(journalError(error));
  }
}

function journalError(cause: Error): MongoCommandError {
  return new MongoCommandError(1, `the journal could not be written (${cause.message}): writes are refused until the engine restarts`);
}

async function writeFully(fd: number, data: Buffer): Promise<void> {
  for (let offset = 0; offset < data.length; ) {
    const { bytesWritten } = await writeAsync(fd, data, offset, data.length - offset);
    offset += bytesWritten;
  }
}
