import type { MediaFormat } from './media-formats.js';

const MAX_FILE_NAME_LENGTH = 200;

/**
 * The name a file is stored and served under, from the name the client sent: without any path,
 * control characters or leading dots, at most 200 characters, and with an extension that matches
 * the sniffed content ("photo.jpg" that is a PNG becomes "photo.png"). Nameless files get "<kind>".
 */
export function storedFileName(original: string | undefined, format: MediaFormat): string {
  const base = (original ?? '')
    .replace(/^.*[/\\]/, '')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .replace(/^[.\s]+/, '')
    .trim();
  const dot = base.lastIndexOf('.');
  const extension = dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
  const stem = dot > 0 ? base.slice(0, dot) : base;
  const suffix = format.extensions.includes(extension) ? extension : format.extensions[0];
  const name = stem.trim() || format.kind;
  return `${name.slice(0, MAX_FILE_NAME_LENGTH - suffix.length - 1)}.${suffix}`;
}

/** RFC 8187 encoding of a header parameter value (`filename*=UTF-8''...`). */
function encodeExtValue(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Images, video and audio are shown in place; documents are downloaded. The plain `filename` is an
 * ASCII stand-in (quotes, backslashes, "%" and non-ASCII replaced) for old clients; `filename*`
 * carries the real name in UTF-8.
 */
export function contentDisposition(format: Pick<MediaFormat, 'kind'>, fileName: string): string {
  const type = format.kind === 'document' ? 'attachment' : 'inline';
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encodeExtValue(fileName)}`;
}
