import { describe, expect, it } from '@jest/globals';
import { contentDisposition, storedFileName } from './file-name.js';
import { mediaFormatOf, type MediaFormat } from './media-formats.js';

function format(mime: string): MediaFormat {
  const found = mediaFormatOf(mime);
  if (!found) throw new Error(`no format ${mime}`);
  return found;
}

describe('storedFileName', () => {
  it.each([
    ['photo.png', 'image/png', 'photo.png'],
    ['photo.JPEG', 'image/jpeg', 'photo.jpeg'],
    ['photo.jpg', 'image/png', 'photo.png'],
    ['invoice', 'application/pdf', 'invoice.pdf'],
    ['report.final.pdf', 'application/pdf', 'report.final.pdf'],
    ['../../etc/passwd', 'application/pdf', 'passwd.pdf'],
    ['C:\\Users\\me\\clip.mp4', 'video/mp4', 'clip.mp4'],
    ['.hidden.png', 'image/png', 'hidden.png'],
    ['bad\r\nname\u0000.gif', 'image/gif', 'badname.gif'],
    ['', 'audio/mpeg', 'audio.mp3'],
    [undefined, 'video/webm', 'video.webm'],
    ['.png', 'image/png', 'png.png'],
    ['voice.ogg', 'audio/ogg; codecs=opus', 'voice.ogg'],
    ['résumé.pdf', 'application/pdf', 'résumé.pdf'],
  ])('%j as %s is %j', (original, mime, expected) => {
    expect(storedFileName(original, format(mime))).toBe(expected);
  });

  it('keeps names to 200 characters, extension included', () => {
    const name = storedFileName(`${'a'.repeat(300)}.pdf`, format('application/pdf'));
    expect(name).toHaveLength(200);
    expect(name.endsWith('.pdf')).toBe(true);
  });
});

describe('contentDisposition', () => {
  it('shows media inline and downloads documents', () => {
    expect(contentDisposition({ kind: 'image' }, 'cat.png')).toBe(`inline; filename="cat.png"; filename*=UTF-8''cat.png`);
    expect(contentDisposition({ kind: 'document' }, 'a.pdf')).toMatch(/^attachment; /);
    expect(contentDisposition({ kind: 'audio' }, 'a.mp3')).toMatch(/^inline; /);
    expect(contentDisposition({ kind: 'video' }, 'a.mp4')).toMatch(/^inline; /);
  });

  it('cannot be broken out of, and carries non-ASCII names encoded', () => {
    const header = contentDisposition({ kind: 'document' }, 'q"uo\\te%20 résumé (1)\'s.pdf');
    expect(header).toBe(
      `attachment; filename="q_uo_te_20 r_sum_ (1)'s.pdf"; filename*=UTF-8''q%22uo%5Cte%2520%20r%C3%A9sum%C3%A9%20%281%29%27s.pdf`,
    );
    expect(header).not.toMatch(/[\r\n]/);
  });
});
