// Benchmark of contact export and erasure (a script, not a test): npm run bench:privacy [-- options]
// Starts the built app on CPU 0 (the embedded engine in its own process, also on CPU 0, or MONGODB_URI) and, from
// this process on CPU 1:
// 1. seeds one contact with one conversation of --messages messages through the driver, and --files files of
//    --file-mib MiB each (random bytes: incompressible) in the media bucket, each carried by one of its messages;
// 2. exports the contact (POST /v1/contacts/:id/export, includeNotes) and samples the app's RSS every 100 ms until
//    the export completes: the growth over the RSS before it (target < 64 MiB for 10 000 messages and 100 MB),
//    and how long it took; then downloads the ZIP and checks its size;
// 3. erases the contact (POST /v1/contacts/:id/erase) and measures the time until the request is completed
//    (target < 30 s for 10 000 messages), then checks that no message text is left.
// Prints the figures with the machine's load (uptime) before and after. The run holds /tmp/parley-load.lock (flock).
// Options: --messages 10000 --files 100 --file-mib 1
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rerunPinnedUnderLock } from '../harness/pinning.mjs';

rerunPinnedUnderLock(fileURLToPath(import.meta.url));

const { GridFSBucket, ObjectId } = await import('mongodb');
const { Api } = await import('../harness/api.mjs');
const { progressLog, sleep, startScenario, uptime } = await import('./lib/scenario.mjs');
const { insertInBatches, registerCompany } = await import('./lib/seed.mjs');

const { values: options } = parseArgs({
  options: {
    messages: { type: 'string', default: '10000' },
    files: { type: 'string', default: '100' },
    'file-mib': { type: 'string', default: '1' },
  },
});
const messageCount = Number(options.messages);
const fileCount = Math.min(Number(options.files), messageCount);
const fileBytes = Math.round(Number(options['file-mib']) * 1024 * 1024);
const TIMEOUT_MS = 600_000;

const log = progressLog('privacy');
const { machine, loadBefore, app, base, db, stop } = await startScenario();
try {
  const api = new Api(base);
  const company = await registerCompany(api, 'Privacy');
  const inbound = await api.json('POST', '/api/external/messages', {
    apiKey: company.apiKey,
    body: { from: { phone: '+14155559000', name: 'Bench Person' }, text: 'first message' },
  });
  const contactId = inbound.data.conversation.contactId;
  const conversationId = new ObjectId(inbound.data.conversation.id);
  const companyId = new ObjectId(company.companyId);

  log(`seeding ${messageCount} messages and ${fileCount} files of ${(fileBytes / 1048576).toFixed(1)} MiB`);
  const bucket = new GridFSBucket(db, { bucketName: 'media' });
  const fileIds = [];
  for (let i = 0; i < fileCount; i++) {
    const upload = bucket.openUploadStream(`file-${i}.pdf`, { metadata: { companyId, uploadedBy: companyId, mimeType: 'application/pdf' } });
    await new Promise((resolve, reject) => upload.end(randomBytes(fileBytes), (error) => (error ? reject(error) : resolve())));
    fileIds.push(upload.id);
  }
  const start = Date.now() - messageCount * 1000;
  await insertInBatches(db.collection('messages'), messageCount - 1, (i) => ({
    companyId,
    conversationId,
    direction: i % 2 ? 'outbound' : 'inbound',
    type: i < fileCount ? 'document' : 'text',
    text: i < fileCount ? null : `message number ${i} about an order`,
    caption: i < fileCount ? `file ${i}` : null,
    media: i < fileCount ? { id: fileIds[i], fileName: `file-${i}.pdf`, mimeType: 'application/pdf', size: fileBytes } : null,
    senderType: i % 2 ? 'agent' : 'contact',
    senderId: null,
    private: i % 50 === 0,
    createdAt: new Date(start + i * 1000),
    updatedAt: new Date(start + i * 1000),
  }));

  const until = async (id) => {
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const request = await api.json('GET', `/v1/privacy-requests/${id}`, { token: company.token });
      if (request.status === 'completed' || request.status === 'failed') return request;
      if (Date.now() > deadline) throw new Error(`privacy request ${id} still ${request.status}`);
      await sleep(100);
    }
  };

  log('exporting');
  await sleep(2000);
  const rssBefore = app.rssMiB();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, app.rssMiB())), 100);
  const exportStarted = Date.now();
  const requested = await api.json('POST', `/v1/contacts/${contactId}/export`, { token: company.token, body: { includeNotes: true } });
  const exported = await until(requested.id);
  const exportSeconds = (Date.now() - exportStarted) / 1000;
  clearInterval(sampler);
  if (exported.status !== 'completed') throw new Error(`the export ${exported.status}: ${exported.failureReason}`);
  const zip = await fetch(base + exported.downloadUrl);
  const zipBytes = (await zip.arrayBuffer()).byteLength;

  log('erasing');
  const eraseStarted = Date.now();
  const erase = await api.json('POST', `/v1/contacts/${contactId}/erase`, { token: company.token, body: {} });
  const erased = await until(erase.id);
  const eraseSeconds = (Date.now() - eraseStarted) / 1000;
  const textsLeft = await db.collection('messages').countDocuments({ companyId, conversationId, text: { $ne: null } });
  const filesLeft = await db.collection('media.files').countDocuments({ 'metadata.companyId': companyId });
  const loadAfter = uptime();

  console.log('');
  console.log(`Contact export and erasure: ${messageCount} messages, ${fileCount} files of ${(fileBytes / 1048576).toFixed(1)} MiB`);
  console.log(`machine: ${machine.cpus} vCPUs, ${machine.model}, Node.js ${machine.node}; engine in its own process on CPU 0`);
  console.log(`load before: ${loadBefore}`);
  console.log(`load after:  ${loadAfter}`);
  console.log(
    `export: ${exportSeconds.toFixed(1)} s, ZIP ${(zipBytes / 1048576).toFixed(1)} MiB; app RSS ${rssBefore.toFixed(0)} MiB before, ` +
      `peak ${rssPeak.toFixed(0)} MiB: growth ${(rssPeak - rssBefore).toFixed(0)} MiB (target < 64)`,
  );
  console.log(`erasure: ${erased.status} in ${eraseSeconds.toFixed(1)} s (target < 30); texts left ${textsLeft}, files left ${filesLeft}`);
} finally {
  await stop();
}
