import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { MediaType } from '../messages/message.schema.js';

/** A file format that may be sent, as recognised from its first bytes. */
export interface MediaFormat {
  /** The MIME type the content sniffer reports, stored and served as the file's Content-Type. */
  mime: string;
  kind: MediaType;
  /** File-name extensions for it; the first is the one given to a file named otherwise. */
  extensions: readonly string[];
}

/**
 * The allow-list. Only formats with a reliable signature, since the declared Content-Type and the
 * file name are never trusted. Plain text and CSV are left out on purpose: they have no signature,
 * so "looks like text" would also let HTML or SVG through, which a browser may run as a page.
 * Office documents are left out too: they are ZIP archives, recognisable only by reading further
 * into the archive than the first few kilobytes.
 */
export const MEDIA_FORMATS: readonly MediaFormat[] = [
  { mime: 'image/jpeg', kind: 'image', extensions: ['jpg', 'jpeg'] },
  { mime: 'image/png', kind: 'image', extensions: ['png'] },
  { mime: 'image/gif', kind: 'image', extensions: ['gif'] },
  { mime: 'image/webp', kind: 'image', extensions: ['webp'] },
  { mime: 'video/mp4', kind: 'video', extensions: ['mp4'] },
  { mime: 'video/webm', kind: 'video', extensions: ['webm'] },
  { mime: 'video/3gpp', kind: 'video', extensions: ['3gp'] },
  { mime: 'audio/mpeg', kind: 'audio', extensions: ['mp3'] },
  { mime: 'audio/ogg', kind: 'audio', extensions: ['ogg', 'oga'] },
  { mime: 'audio/ogg; codecs=opus', kind: 'audio', extensions: ['opus', 'ogg'] },
  { mime: 'audio/wav', kind: 'audio', extensions: ['wav'] },
  { mime: 'audio/aac', kind: 'audio', extensions: ['aac'] },
  { mime: 'audio/mp4', kind: 'audio', extensions: ['m4a', 'mp4'] },
  { mime: 'audio/x-m4a', kind: 'audio', extensions: ['m4a'] },
  { mime: 'audio/amr', kind: 'audio', extensions: ['amr'] },
  { mime: 'application/pdf', kind: 'document', extensions: ['pdf'] },
];

export function mediaFormatOf(mime: string | undefined): MediaFormat | undefined {
  return MEDIA_FORMATS.find((format) => format.mime === mime);
}

/** "image: image/jpeg, image/png, ...; video: ...", for error messages and the API docs. */
export function describeAllowedFormats(kind?: MediaType): string {
  const kinds = kind ? [kind] : [...new Set(MEDIA_FORMATS.map((format) => format.kind))];
  return kinds
    .map((each) => `${each}: ${MEDIA_FORMATS.filter((format) => format.kind === each).map((format) => format.mime).join(', ')}`)
    .join('; ');
}

/**
 * The kind of a file's content, when `declared` (the upload's `type`) is that kind or absent: a 400 on `file`
 * otherwise, since the content decides and the caller said something else.
 */
export function kindOfUpload(format: MediaFormat, declared: MediaType | undefined): MediaType {
  if (!declared || declared === format.kind) return format.kind;
  throw new RequestValidationException([
    { field: 'file', message: `file content is ${format.mime}, which is not an allowed ${declared} (${describeAllowedFormats(declared)})` },
  ]);
}
