import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiProduces, ApiQuery } from '@nestjs/swagger';
import { WEBHOOK_EVENT_NAMES } from '../webhooks/webhook-events.js';

/** The list's semantics, repeated on both interfaces' list operations. */
export const LIST_DOC = `
The company's event log, oldest first: the same events, with the same \`evt_...\` ids, as the webhook
deliveries. Without \`after\` it starts at the oldest event kept (events are kept \`EVENT_RETENTION_DAYS\`,
30 by default). \`nextCursor\` is never null: pass it back as \`after\` for the next page; an empty \`data\`
means you are caught up, and the same cursor picks up the events that come next. A cursor from before the
oldest event kept answers 410 (list again without \`after\`); a malformed cursor, or another company's, 400.
\`types\` keeps only the named events (dotted or Interface B names, like webhook subscriptions); the cursor
still moves past the others.
`.trim();

const FRAME_EXAMPLE = (type: string) =>
  [
    'id: ZTE6NDI6OWYzYzFhMmI',
    `event: ${type}`,
    `data: {"id":"evt_Qm9vdHN0cmFwcGVkRXZlbnQ","type":"${type}","sequence":42,"occurredAt":"2026-05-01T12:00:00.000Z","companyId":"6650f0c2a1b2c3d4e5f60718","data":{"message":{},"conversation":{}}}`,
    '',
    ': keep-alive',
    '',
    '',
  ].join('\n');

/** The stream's semantics, repeated on both interfaces' stream operations. */
export const STREAM_DOC = `
Server-Sent Events (\`text/event-stream\`): the company's events as they are logged, each as one frame

    id: <cursor>
    event: <type>
    data: <the event as a list item, one line of JSON>

followed by a blank line, and a \`: keep-alive\` comment whenever the stream has been quiet for
\`EVENT_STREAM_KEEPALIVE_MS\` (15 s by default).
A new event reaches open streams within a second.

**Resuming.** Each \`id\` is a cursor, the same as the list's \`nextCursor\`. Reconnect with the
\`Last-Event-ID\` header (EventSource sends it by itself) or \`?after=<cursor>\` to get every event after it
exactly once: nothing skipped, nothing repeated. \`Last-Event-ID\` wins over \`after\`, since EventSource
reconnects to the URL it was opened with. With neither, the stream starts with the events from now on. The
cursor rules are the list's: 400 for a malformed or foreign one, 410 for one older than the events kept.

**Limits.** At most \`EVENT_STREAMS_PER_COMPANY\` (20 by default) open streams per company across the
deployment: one more answers 429. A client that stops reading is disconnected once it leaves
\`EVENT_STREAM_MAX_BUFFER_BYTES\` (1 MiB) unread, or takes nothing for two keep-alive intervals and 5 s; it
resumes from its last \`id\`. The stream ends cleanly when the server shuts down:
reconnect, with \`Last-Event-ID\`.

**Credentials.** The stream follows its credential: within 10 s of its API key being revoked, expiring or losing
the \`events:read\` scope (Interface B), or of its bearer token expiring or being ended by its agent's
deactivation, new role or new password (Interface A), it ends with a last comment saying why, and a reconnection
gets the 401 or 403 any request with that credential gets. Keep your token fresh before it expires and reconnect.

Browsers: EventSource cannot send credentials headers, so open it on a
same-origin path that your backend proxies here with the header added (see docs/events.md, "Consumers").
`.trim();

/** Documents a stream operation: its media type, frame format, `Last-Event-ID` and response headers. */
export const ApiEventStream = (exampleType: string) =>
  applyDecorators(
    ApiProduces('text/event-stream'),
    ApiHeader({
      name: 'Last-Event-ID',
      required: false,
      description: 'Resume after this cursor (the `id` of the last frame received); wins over `after`',
      schema: { type: 'string', maxLength: 200 },
    }),
    ApiOkResponse({
      description: 'The stream: one frame per event, keep-alive comments, open until either side ends it',
      headers: {
        'Cache-Control': { description: '`no-cache, no-transform`', schema: { type: 'string' } },
        'X-Accel-Buffering': { description: '`no`: proxies must not buffer the stream', schema: { type: 'string' } },
      },
      content: { 'text/event-stream': { schema: { type: 'string' }, example: FRAME_EXAMPLE(exampleType) } },
    }),
  );

/**
 * The `types` parameter of the feed's operations: an array sent comma-separated, which is OpenAPI's form style
 * without explode (the DTO property cannot say so: ApiProperty has no `style`).
 */
export const ApiEventTypesQuery = () =>
  ApiQuery({
    name: 'types',
    required: false,
    isArray: true,
    enum: WEBHOOK_EVENT_NAMES,
    style: 'form',
    explode: false,
    example: ['message.received', 'CHAT_SENT'],
    description: 'Only these events: dotted or Interface B names, mixed if you like, comma-separated (`types` repeated works too)',
  });
