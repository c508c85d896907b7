import { LatencyRecorder } from '../../harness/stats.mjs';

import { request } from 'node:http';

const OCCURRED_AT = '"occurredAt":"';
const SEQUENCE = '"sequence":';

/**
 * One event stream read as a load client reads it: frames split on the blank line, and for each event only
 * what the measurement needs, found in the frame's text (its sequence and occurredAt, near the start of the
 * data line) rather than by parsing the whole JSON. Latency is occurredAt → the chunk holding the frame arrived.
 */
export class FeedReader {
  /** `latencies`: a LatencyRecorder (harness/stats.mjs) shared by the readers; `arrivals`: their Arrivals. */
  constructor(latencies, arrivals) {
    this.latencies = latencies;
    this.arrivals = arrivals;
    this.buffer = '';
    this.events = 0;
    this.keepAlives = 0;
    this.lastSequence = 0;
    /** Events whose sequence did not increase: a repeat, or the stream out of order. */
    this.outOfOrder = 0;
    this.lastAt = 0;
    this.ended = null;
  }

  /** Opens `url` and resolves once the stream's headers have arrived (status 200), else rejects. */
  open(url, headers) {
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { accept: 'text/event-stream', ...headers } });
      req.on('error', (error) => (this.response ? (this.ended ??= `error: ${error.code ?? error.message}`) : reject(error)));
      req.on('response', (response) => {
        this.response = response;
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`${url}: ${response.statusCode}`));
          return;
        }
        response.setEncoding('utf8');
        response.on('data', (chunk) => this.take(chunk));
        response.on('end', () => (this.ended ??= 'end'));
        response.on('aborted', () => (this.ended ??= 'aborted'));
        resolve(this);
      });
      req.end();
    });
  }

  take(chunk) {
    const now = Date.now();
    this.buffer += chunk;
    let start = 0;
    let end;
    while ((end = this.buffer.indexOf('\n\n', start)) >= 0) {
      if (this.buffer.startsWith(':', start)) {
        this.keepAlives += 1;
      } else {
        const sequenceAt = this.buffer.indexOf(SEQUENCE, start) + SEQUENCE.length;
        const sequence = Number(this.buffer.slice(sequenceAt, this.buffer.indexOf(',', sequenceAt)));
        const occurredAt = this.buffer.indexOf(OCCURRED_AT, start) + OCCURRED_AT.length;
        this.latencies.add(now - Date.parse(this.buffer.slice(occurredAt, occurredAt + 24)));
        this.arrivals.add(sequence, now);
        if (sequence <= this.lastSequence) this.outOfOrder += 1;
        this.lastSequence = sequence;
        this.events += 1;
        this.lastAt = now;
      }
      start = end + 2;
    }
    this.buffer = this.buffer.slice(start);
  }

  close() {
    this.response?.destroy();
  }
}

/** Every delivery's event sequence and arrival time, to set against when the event was logged. */
export class Arrivals {
  constructor() {
    this.sequences = new Float64Array(1 << 16);
    this.times = new Float64Array(1 << 16);
    this.length = 0;
  }

  add(sequence, at) {
    if (this.length === this.sequences.length) {
      for (const name of ['sequences', 'times']) {
        const grown = new Float64Array(this[name].length * 2);
        grown.set(this[name]);
        this[name] = grown;
      }
    }
    this.sequences[this.length] = sequence;
    this.times[this.length++] = at;
  }

  /** Arrival − `loggedAt(sequence)` of every delivery, in ms: the feed's own share of the latency. */
  sinceLogged(loggedAt) {
    const latencies = new LatencyRecorder();
    for (let i = 0; i < this.length; i++) latencies.add(this.times[i] - loggedAt.get(this.sequences[i]));
    return latencies;
  }
}
