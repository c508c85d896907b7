// Every stored document of one company, read from the database through the driver, to compare before and after.
import { EJSON } from 'bson';
import { ObjectId } from 'mongodb';

/** Answers a Map of `<collection>/<_id>` → canonical EJSON of the document, over every collection. */
export async function snapshotCompany(db, companyId) {
  const company = new ObjectId(companyId);
  const documents = new Map();
  const collections = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
  for (const name of collections) {
    const filter = { $or: [{ _id: company }, { companyId: company }, { 'metadata.companyId': company }] };
    for (const document of await db.collection(name).find(filter).toArray()) {
      documents.set(`${name}/${String(document._id)}`, EJSON.stringify(document, { relaxed: false }));
    }
  }
  // GridFS chunks carry only their file's id.
  const files = [...documents.keys()].filter((key) => key.startsWith('media.files/')).map((key) => new ObjectId(key.split('/')[1]));
  if (collections.includes('media.chunks')) {
    for (const chunk of await db.collection('media.chunks').find({ files_id: { $in: files } }).toArray()) {
      documents.set(`media.chunks/${String(chunk._id)}`, EJSON.stringify(chunk, { relaxed: false }));
    }
  }
  return documents;
}

/** `[{ key, change: 'added' | 'removed' | 'changed' }]` between two snapshots. */
export function differences(before, after) {
  const changes = [];
  for (const [key, value] of before) {
    if (!after.has(key)) changes.push({ key, change: 'removed' });
    else if (after.get(key) !== value) changes.push({ key, change: 'changed' });
  }
  for (const key of after.keys()) if (!before.has(key)) changes.push({ key, change: 'added' });
  return changes;
}

/** The strings that must never reach company A: every id of B's documents. */
export function idsIn(snapshot) {
  return [...snapshot.keys()].map((key) => key.split('/')[1]).filter((id) => /^[0-9a-f]{24}$/.test(id));
}
