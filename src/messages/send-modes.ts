import { RequestValidationException, type FieldProblem } from '../common/errors/request-validation.exception.js';
import { exactlyOneOf } from '../common/exactly-one-of.js';
import type { SendMessageDto } from './dto/send-message.dto.js';

/**
 * The ways POST /conversations/:id/messages sends, each named by its field: a body gives exactly one. A new mode is a
 * field of SendMessageDto, an entry here (with its options below), and a case of MessageComposer.send.
 */
export const SEND_MODES = ['text', 'cannedResponseId', 'template'] as const satisfies readonly (keyof SendMessageDto)[];
export type SendMode = (typeof SEND_MODES)[number];

/** Fields that only go with one mode. */
const MODE_OPTIONS: Partial<Record<keyof SendMessageDto, SendMode>> = { private: 'text', mentions: 'text' };

/** The body's mode; 400 naming the field when there is none, more than one, or an option of another mode. */
export function sendModeOf(dto: SendMessageDto): SendMode {
  const mode = exactlyOneOf(dto, SEND_MODES);
  const problems: FieldProblem[] = [];
  for (const [field, owner] of Object.entries(MODE_OPTIONS)) {
    if (owner !== mode && dto[field as keyof SendMessageDto] !== undefined) problems.push({ field, message: `${field} goes only with ${owner}` });
  }
  if (mode === 'text' && dto.mentions !== undefined && dto.private !== true) {
    problems.push({ field: 'mentions', message: 'mentions go only with private notes (private: true)' });
  }
  if (problems.length > 0) throw new RequestValidationException(problems);
  return mode;
}
