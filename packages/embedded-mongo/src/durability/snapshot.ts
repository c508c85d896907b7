/**
 * Snapshots: the whole state at one LSN in `snapshot.bin`, framed like the journal. Records: a header
 * `{ snapshot: { format, lsn } }`; per collection `{ collection: { db, name, options, indexes }, documents: n }`
 * followed by its n documents, one record each; a trailer `{ end: { collections, documents } }`.
 *
 * Taking one does not stop the server: stored documents are never modified in place, so capturing the state is
 * copying references (synchronously, in the same turn as the journal's rotation), and the file is then written in
 * chunks while commands keep running. It becomes the snapshot only once complete and fsynced (temp file, fsync,
 * rename, fsync of the directory).
 */
import { existsSync, unlinkSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Document } from 'bson';
import type { Engine } from '../storage/engine.js';
import { decode, frame, RecordReader } from './framing.js';
import { syncDirectory } from './files.js';

export const SNAPSHOT_FILE = 'snapshot.bin';
const TEMP_FILE = 'snapshot.tmp';
const FORMAT = 1;
const WRITE_CHUNK = 4 * 1024 * 1024;

interface CollectionImage {
  header: Buffer;
  docs: Document[];
}

export interface Capture {
  lsn: number;
  collections: CollectionImage[];
}

/** The state at `lsn`: collection headers encoded now (their options and specs may be replaced later), documents by reference. */
export function capture(engine: Engine, lsn: number): Capture {
  const collections: CollectionImage[] = [];
  for (const db of engine.databases.values()) {
    for (const coll of db.collections.values()) {
      // The _id index (a clustered one too) comes from the options; a time series collection has none.
      const indexes = [...coll.indexes.values()].filter((ix) => ix !== coll.idIndex).map((ix) => ix.spec);
      const header = frame({ collection: { db: db.name, name: coll.name, options: coll.options, indexes }, documents: coll.docs.size });
      collections.push({ header, docs: [...coll.docs.values()] });
    }
  }
  return { lsn, collections };
}

/** Writes the captured state as the directory's snapshot, durably; returns its size in bytes. */
export async function writeSnapshot(dir: string, state: Capture): Promise<number> {
  const temp = join(dir, TEMP_FILE);
  const handle = await open(temp, 'w');
  let size = 0;
  let chunk: Buffer[] = [];
  let chunkBytes = 0;
  const add = async (record: Buffer) => {
    chunk.push(record);
    chunkBytes += record.length;
    if (chunkBytes >= WRITE_CHUNK) await drain();
  };
  const drain = async () => {
    const data = Buffer.concat(chunk, chunkBytes);
    chunk = [];
    chunkBytes = 0;
    await handle.write(data);
    size += data.length;
  };
  try {
    let documents = 0;
    await add(frame({ snapshot: { format: FORMAT, lsn: state.lsn } }));
    for (const image of state.collections) {
      await add(image.header);
      for (const doc of image.docs) await add(frame(doc));
      documents += image.docs.length;
    }
    await add(frame({ end: { collections: state.collections.length, documents } }));
    await drain();
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, join(dir, SNAPSHOT_FILE));
  await syncDirectory(dir);
  return size;
}

export class DamagedSnapshotError extends Error {}

/**
 * Loads `snapshot.bin` into an engine that records nothing; returns its LSN and counts (lsn 0 without a snapshot).
 * A snapshot is complete by construction, so any damage is reported, never worked around.
 */
export function loadSnapshot(dir: string, engine: Engine): { lsn: number; collections: number; documents: number } {
  const temp = join(dir, TEMP_FILE);
  if (existsSync(temp)) unlinkSync(temp); // an unfinished snapshot: the journal still holds what it would have covered
  const path = join(dir, SNAPSHOT_FILE);
  if (!existsSync(path)) return { lsn: 0, collections: 0, documents: 0 };
  const reader = new RecordReader(path);
  const next = (): Document => {
    const payload = reader.next();
    if (!payload) throw new DamagedSnapshotError(`${path} is damaged: ${reader.problem ?? 'it ends early'} at byte ${reader.offset}`);
    return decode(payload);
  };
  try {
    const head = next();
    if (head.snapshot?.format !== FORMAT) throw new DamagedSnapshotError(`${path} is not a snapshot of format ${FORMAT}`);
    let collections = 0;
    let documents = 0;
    let record = next();
    for (; !record.end; record = next()) {
      const { db, name, options, indexes } = record.collection as Document;
      const count = Number(record.documents);
      const coll = engine.db(db).create(name, options);
      for (let i = 0; i < count; i++) coll.insert(next());
      // Built after the documents (one pass per index instead of an insertion per document and index), as they were.
      for (const spec of indexes as Document[]) coll.putIndex(spec);
      collections += 1;
      documents += count;
    }
    if (Number(record.end.collections) !== collections || Number(record.end.documents) !== documents)
      throw new DamagedSnapshotError(`${path} is damaged: its trailer counts ${record.end.documents} documents, it holds ${documents}`);
    return { lsn: Number(head.snapshot.lsn), collections, documents };
  } finally {
    reader.close();
  }
}
