const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the event log's consumers have caught up with the log and let go of their lanes. */
export async function settled(db, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const lanes = await db
      .collection('event_consumers')
      .find({}, { projection: { position: 1, head: 1, leaseOwner: 1 } })
      .toArray();
    if (lanes.every((lane) => lane.position >= lane.head && lane.leaseOwner === null)) return;
    await sleep(250);
  }
  throw new Error('the consumers did not settle');
}
