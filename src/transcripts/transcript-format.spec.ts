import { describe, expect, it } from '@jest/globals';
import { localMinuteOf } from '../common/calendar-dates.js';
import { transcriptBody, transcriptLine } from './transcript-format.js';

const note = { text: null, caption: null, media: null, private: false };

describe('transcript lines', () => {
  it('writes times as YYYY-MM-DD HH:MM in the given time zone', () => {
    const at = new Date('2026-05-01T22:30:59.999Z');
    expect(localMinuteOf(at, 'UTC')).toBe('2026-05-01 22:30');
    expect(localMinuteOf(at, 'Europe/Paris')).toBe('2026-05-02 00:30');
    expect(localMinuteOf(at, 'America/New_York')).toBe('2026-05-01 18:30');
    expect(localMinuteOf(new Date('2026-01-01T00:05:00Z'), 'Asia/Kolkata')).toBe('2026-01-01 05:35');
  });

  it('shows midnight as 00, not 24', () => {
    expect(localMinuteOf(new Date('2026-05-01T00:00:00Z'), 'UTC')).toBe('2026-05-01 00:00');
  });

  it('writes a text message as its text', () => {
    expect(transcriptBody({ ...note, text: 'Where is my order?' })).toBe('Where is my order?');
  });

  it('writes a media message as its file name in brackets, then its caption', () => {
    const media = { id: 'm', fileName: 'receipt.pdf', mimeType: 'application/pdf', size: 1, url: '/v1/media/m' };
    expect(transcriptBody({ ...note, media })).toBe('[receipt.pdf]');
    expect(transcriptBody({ ...note, media, caption: 'Your receipt' })).toBe('[receipt.pdf] Your receipt');
  });

  it('marks a private note', () => {
    expect(transcriptBody({ ...note, text: 'VIP customer', private: true })).toBe('[private note] VIP customer');
  });

  it('keeps each message on one line: line breaks are written \\n', () => {
    expect(transcriptBody({ ...note, text: 'one\ntwo\r\nthree\rfour' })).toBe('one\\ntwo\\nthree\\nfour');
  });

  it('makes the whole line: time, name, sender type, body', () => {
    const message = { ...note, text: 'Hello', createdAt: '2026-05-01T09:14:00.000Z' };
    expect(transcriptLine(message, { name: 'Grace Hopper', type: 'contact' }, 'UTC')).toBe('[2026-05-01 09:14] Grace Hopper (contact): Hello\n');
    expect(transcriptLine(message, { name: 'Ada\nLovelace', type: 'agent' }, 'Europe/Paris')).toBe('[2026-05-01 11:14] Ada Lovelace (agent): Hello\n');
  });
});
