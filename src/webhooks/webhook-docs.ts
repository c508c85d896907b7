/** The delivery contract, repeated in the OpenAPI descriptions of the routes that register webhooks. */
export const DELIVERY_FORMAT_DOC = `
**Delivery** (Standard Webhooks): each event is POSTed to \`url\` with the JSON body
\`{ "id": "evt_...", "type": "<event name as subscribed>", "timestamp": "<ISO-8601>", "companyId": "...", "data": { ... } }\`
and the headers \`content-type: application/json\`, \`user-agent: Parley-Webhooks/1.0\`,
\`webhook-id\` (the delivery's \`dlv_...\` id: the same on every retry, so de-duplicate on it),
\`webhook-timestamp\` (unix seconds of this attempt) and \`webhook-signature: v1,<signature>\`.

**Signature**: base64 of HMAC-SHA256 over \`<webhook-id>.<webhook-timestamp>.<raw body>\`, keyed with the
base64-decoded part of the secret after \`whsec_\`. Verify it on the raw body, compare in constant time, and
refuse timestamps more than a few minutes old.

**Retries**: any answer but 2xx (redirects are not followed) or no answer within the timeout is a failure.
Retry n waits \`backoffMs × 2^(n-1)\` (at most one hour); after \`maxRetries\` retries the delivery is failed.
A \`429\` or \`503\` with \`Retry-After\` sets the next attempt; a \`410 Gone\` disables the webhook.
Deliveries to one webhook are made one at a time, in event order (the order of the company's event log).

**Channels**: \`channels\` limits a webhook to the events of conversations on those channels (a WhatsApp
connector's webhook, say); events of no conversation arrive all the same. Send \`null\` on update for every channel.

**Pause and delete**: \`isActive: false\` attempts nothing and records no new events; pending deliveries
wait for \`isActive: true\`. Deleting a webhook discards its pending deliveries.

**Targets**: http(s) only; loopback, private, link-local and cloud metadata addresses are refused at
registration and at delivery unless the server runs with \`WEBHOOK_ALLOW_PRIVATE_URLS=true\`.
`.trim();
