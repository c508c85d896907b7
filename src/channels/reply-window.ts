import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { problemExample, ProblemDetailsDto } from '../common/errors/api-error-responses.js';
import { problemTypeUri, TypedProblemException } from '../common/errors/typed-problem.exception.js';

const HOUR_MS = 3_600_000;

/** The problem type of a free-form message refused outside the reply window (contract section 17). */
export const REPLY_WINDOW_CLOSED = problemTypeUri('reply-window-closed');

/** When a window opened by a contact's message at `at` closes. */
export function replyWindowEnd(at: Date, hours: number): Date {
  return new Date(at.getTime() + hours * HOUR_MS);
}

/** Whether a window closing at `expiresAt` (null: never opened) is open at `now`. */
export function isReplyWindowOpen(expiresAt: Date | null | undefined, now: Date): boolean {
  return expiresAt != null && expiresAt.getTime() > now.getTime();
}

/** Where the refused message was going: the conversation, or (a proactive message) only the channel. */
export interface ReplyWindowSubject {
  conversationId: string | null;
  channel: string;
}

/**
 * 409: a free-form message (text, media, canned response, flow or bot message) while the conversation's reply window
 * is not open. Says when it closed (null: it never opened, the contact has not written on the channel yet); an
 * approved template may be sent instead.
 */
export class ReplyWindowClosedException extends TypedProblemException {
  constructor(subject: ReplyWindowSubject, closedAt: Date | null) {
    const where = subject.conversationId
      ? `conversation ${subject.conversationId} on channel ${subject.channel}`
      : `the contact on channel ${subject.channel}`;
    const state = closedAt
      ? `The reply window of ${where} closed at ${closedAt.toISOString()}`
      : `There is no open reply window for ${where}: the contact has not written on it yet`;
    super(409, REPLY_WINDOW_CLOSED, 'Reply window closed', `${state}. Only an approved template can be sent until the contact writes again`, {
      closedAt: closedAt?.toISOString() ?? null,
      conversationId: subject.conversationId,
      channel: subject.channel,
    });
  }
}

/** The 409 body of a closed reply window, for the OpenAPI document. */
export class ReplyWindowClosedProblemDto extends ProblemDetailsDto {
  @ApiPropertyOptional({ type: String, nullable: true, format: 'date-time', description: 'When the window closed; null when it never opened (the contact has not written on the channel yet)' })
  closedAt?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: '6650f0c2a1b2c3d4e5f60718', description: 'null for a proactive message that found no open conversation' })
  conversationId?: string | null;
  @ApiPropertyOptional({ example: 'whatsapp' })
  channel?: string;
}

const CLOSED_EXAMPLE = {
  ...problemExample(409, 'The reply window of conversation 6650f0c2a1b2c3d4e5f60718 on channel whatsapp closed at 2026-05-02T09:14:03.000Z. Only an approved template can be sent until the contact writes again'),
  type: REPLY_WINDOW_CLOSED,
  title: 'Reply window closed',
  closedAt: '2026-05-02T09:14:03.000Z',
  conversationId: '6650f0c2a1b2c3d4e5f60718',
  channel: 'whatsapp',
};

/**
 * Documents the 409 of a free-form message outside the reply window: its problem type and members, with the route's
 * other conflict, if any, in the description.
 */
export const ApiReplyWindowClosedResponse = (otherConflict?: string) =>
  applyDecorators(
    ApiExtraModels(ReplyWindowClosedProblemDto),
    ApiResponse({
      status: 409,
      description:
        `The channel has a reply window and it is not open: problem type \`${REPLY_WINDOW_CLOSED}\` with \`closedAt\` ` +
        '(null: never opened); send an approved template instead' +
        (otherConflict ? `; or ${otherConflict}` : ''),
      content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ReplyWindowClosedProblemDto) }, example: CLOSED_EXAMPLE } },
    }),
  );
