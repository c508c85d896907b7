import { HttpException, Injectable, Logger } from '@nestjs/common';
import type { Types } from 'mongoose';
import { ConversationTransfers } from '../assignment/conversation-transfers.js';
import { CannedResponsesService } from '../canned-responses/canned-responses.service.js';
import { ContactsService } from '../contacts/contacts.service.js';
import type { Conversation, Priority } from '../conversations/conversation.schema.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { ConversationSnoozes } from '../conversations/snooze/conversation-snoozes.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { EventCause } from '../events/event-cause.js';
import { EventLogRepository } from '../events/event-log.repository.js';
import { explainFilter, matchesFilter, parseDuration, type ConditionResult, type EvaluatedRecord } from '../filters/index.js';
import { FlowRunner } from '../flows/flow-runner.js';
import { FlowsRepository } from '../flows/flows.repository.js';
import { Clock } from '../lanes/clock.js';
import type { SendTemplateDto } from '../message-templates/dto/send-template.dto.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { MessagesService } from '../messages/messages.service.js';
import { PrivateNotes } from '../messages/private-notes.js';
import { FilterCompiler } from '../search/filter-compiler.js';
import type { AutomationRule, RuleAction } from './automation-rule.schema.js';
import { readsContact, type LoadedRule } from './automation-rule-cache.js';
import type { RunActionResult, RunTrigger } from './automation-run.schema.js';
import { AutomationRunsRepository, type StoredRun } from './automation-runs.repository.js';

/** A chain of rules triggering rules stops here: a trigger event this deep records `loop_stopped` (contract section 21). */
export const MAX_RULE_DEPTH = 3;

/** One firing of a rule: the trigger's key (unique per rule), what it was, and the depth of the event that set it off. */
export interface RuleFiring {
  key: string;
  trigger: RunTrigger;
  /** The depth in the triggering event's `cause` (0: no rule caused it). */
  triggerDepth: number;
  /**
   * The run recorded already for this trigger (the event is handled again after a crash), or null, when the caller
   * read the runs of several rules at once; left out, the runner reads it when it needs it.
   */
  recorded?: StoredRun | null;
}

function errorText(error: unknown): string {
  const response = error instanceof HttpException ? error.getResponse() : undefined;
  const message = typeof response === 'string' ? response : (response as { message?: string | string[] })?.message;
  return Array.isArray(message) ? message.join('; ') : (message ?? 'Internal error');
}

/** What makes an action of a run recognisable when it runs again: the id of its event, the key of its message or flow run. */
const keysOf = (runId: Types.ObjectId, index: number) => ({
  eventId: `evt_rule_${runId.toHexString()}_${index}`,
  dedupeKey: `rule:${runId.toHexString()}:${index}`,
});

/**
 * Runs a rule on a conversation (contract section 21): its conditions on the conversation as it is now, then, for a
 * match, a run recorded before its actions (once per rule and trigger), each action through the same service as its
 * route, recorded as it ends. An action that fails is recorded and the next still runs, unless `stopOnError`. A run
 * interrupted by a crash resumes after its last recorded action; the one under way is recognised by its event,
 * message or flow run (keyed by the run and the action's index), or is idempotent (tags, priority, attributes, team,
 * agent, snooze), so no effect is applied twice. Every event the actions cause carries `cause: { ruleId, runId,
 * depth }`.
 */
@Injectable()
export class RuleRunner {
  private readonly logger = new Logger(RuleRunner.name);

  constructor(
    private readonly runs: AutomationRunsRepository,
    private readonly filters: FilterCompiler,
    private readonly conversationRecords: ConversationsRepository,
    private readonly conversations: ConversationsService,
    private readonly contacts: ContactsService,
    private readonly transfers: ConversationTransfers,
    private readonly messages: MessagesService,
    private readonly messageRecords: MessagesRepository,
    private readonly notes: PrivateNotes,
    private readonly snoozes: ConversationSnoozes,
    private readonly cannedResponses: CannedResponsesService,
    private readonly flows: FlowsRepository,
    private readonly flowRunner: FlowRunner,
    private readonly log: EventLogRepository,
    private readonly clock: Clock,
  ) {}

  /** Whether the conversation matches the rule's conditions now, with each condition's outcome (the dry run). */
  async evaluate(
    companyId: CompanyId,
    rule: Stored<AutomationRule>,
    conversation: Stored<Conversation>,
  ): Promise<{ matched: boolean; conditions: ConditionResult[] }> {
    if (!rule.conditions) return { matched: true, conditions: [] };
    const filter = await this.filters.parse(companyId, 'conversation', rule.conditions, 'conditions');
    return explainFilter(filter, await this.subjectOf(companyId, readsContact(rule.conditions), conversation), { now: this.clock.now() });
  }

  /** The conversation as stored, and its contact only when a condition reads one. */
  private async subjectOf(companyId: CompanyId, withContact: boolean, conversation: Stored<Conversation>): Promise<EvaluatedRecord> {
    const record = conversation as unknown as Record<string, unknown>;
    if (!withContact) return { record };
    const contact = await this.contacts.findById(companyId, conversation.contactId.toHexString());
    return { record, contact: contact as unknown as Record<string, unknown> | null };
  }

  /**
   * Fires the rule on the conversation for this trigger: resumes the run already recorded for it, or, when the
   * conditions match now, records one and runs it. Nothing is recorded when they do not. Answers the conversation as
   * the run left it (null once it is gone), or the one given when nothing ran, so that the next rule reads no more.
   */
  async fire(companyId: CompanyId, loaded: LoadedRule, conversation: Stored<Conversation>, firing: RuleFiring): Promise<Stored<Conversation> | null> {
    const { rule } = loaded;
    if (loaded.filter) {
      const subject = await this.subjectOf(companyId, loaded.readsContact, conversation);
      if (!matchesFilter(loaded.filter, subject, { now: this.clock.now() })) {
        // A run a crash interrupted goes on even if the conversation no longer matches: its first actions are applied.
        const existing = firing.recorded !== undefined ? firing.recorded : await this.runs.findOne(companyId, { triggerKey: firing.key });
        return existing ? this.resume(companyId, rule, existing, true) : conversation;
      }
    }
    const claim = {
      ruleId: rule._id,
      conversationId: conversation._id,
      triggerKey: firing.key,
      trigger: firing.trigger,
      depth: firing.triggerDepth + 1,
    };
    const { run, resumed } = await this.runs.claim(companyId, claim, this.clock.now());
    return this.resume(companyId, rule, run, resumed, resumed ? undefined : conversation);
  }

  /**
   * Carries a `running` run to its end; `uncertain`: its next action may have been applied by a run that died.
   * `read`: the conversation as the run's trigger found it, which its first action starts from instead of reading it
   * again. Answers the conversation as the run left it (null once it is gone).
   */
  private async resume(
    companyId: CompanyId,
    rule: Stored<AutomationRule>,
    run: StoredRun,
    uncertain: boolean,
    read?: Stored<Conversation>,
  ): Promise<Stored<Conversation> | null> {
    const conversationId = run.conversationId.toHexString();
    if (run.outcome !== 'running') return this.conversationRecords.findById(companyId, conversationId);
    if (run.depth > MAX_RULE_DEPTH) {
      const skipped = rule.actions.map((action): RunActionResult => ({ type: action.type, status: 'skipped' }));
      return this.finish(companyId, run, skipped, 'loop_stopped');
    }
    const cause: EventCause = { ruleId: rule._id.toHexString(), runId: run._id.toHexString(), depth: run.depth };
    const results = [...run.actions];
    for (let index = results.length; index < rule.actions.length; index += 1) {
      const action = rule.actions[index];
      const keys = keysOf(run._id, index);
      let result: RunActionResult;
      if (rule.stopOnError && results.some((done) => done.status === 'failed')) result = { type: action.type, status: 'skipped' };
      else if (uncertain && index === run.actions.length && (await this.wasApplied(companyId, conversationId, action, keys)))
        result = { type: action.type, status: 'ok' };
      else result = await this.perform(companyId, index === run.actions.length && read ? read : conversationId, run, action, { ...keys, cause });
      results.push(result);
      // The last one is recorded by `finish`; a crash before it leaves that action uncertain, checked on resuming.
      if (index < rule.actions.length - 1) await this.runs.recordAction(companyId, run._id, index, result);
    }
    return this.finish(companyId, run, results, results.some((result) => result.status === 'failed') ? 'failed' : 'applied');
  }

  private async finish(
    companyId: CompanyId,
    run: StoredRun,
    actions: RunActionResult[],
    outcome: 'applied' | 'failed' | 'loop_stopped',
  ): Promise<Stored<Conversation> | null> {
    const conversation = await this.conversationRecords.findById(companyId, run.conversationId.toHexString());
    if (conversation) await this.runs.finish(companyId, run, actions, outcome, ConversationView.from(conversation));
    return conversation;
  }

  private async perform(
    companyId: CompanyId,
    conversation: string | Stored<Conversation>,
    run: StoredRun,
    action: RuleAction,
    options: { eventId: string; dedupeKey: string; cause: EventCause },
  ): Promise<RunActionResult> {
    try {
      await this.apply(companyId, run, conversation, action, options);
      return { type: action.type, status: 'ok' };
    } catch (error) {
      if (!(error instanceof HttpException))
        this.logger.error(`Rule ${run.ruleId.toHexString()} action ${action.type} failed: ${(error as Error).stack}`);
      return { type: action.type, status: 'failed', error: errorText(error) };
    }
  }

  /** Applies one action; `conversation` is its id, or (the run's first action) the record its trigger read. */
  private async apply(
    companyId: CompanyId,
    run: StoredRun,
    conversation: string | Stored<Conversation>,
    action: RuleAction,
    options: { eventId: string; dedupeKey: string; cause: EventCause },
  ): Promise<void> {
    const { cause } = options;
    const ruleId = run.ruleId.toHexString();
    const id = typeof conversation === 'string' ? conversation : conversation._id.toHexString();
    switch (action.type) {
      case 'assign_team':
        await this.transfers.toTeam(companyId, id, action.teamId as string, { kind: 'rule', id: ruleId }, { cause });
        return;
      case 'assign_agent':
        await this.conversations.assign(companyId, conversation, action.agentId as string, { kind: 'flow', id: null }, { cause });
        return;
      case 'handoff':
        await this.conversations.handOff(companyId, id, { eventId: options.eventId, cause });
        return;
      case 'set_priority':
        await this.conversations.setPriority(companyId, id, action.priority as Priority, { cause });
        return;
      case 'add_tags':
        await this.conversations.addTags(companyId, conversation, action.tags as string[], { cause });
        return;
      case 'remove_tags':
        await this.conversations.removeTags(companyId, conversation, action.tags as string[], { cause });
        return;
      case 'set_attribute':
        await this.conversations.update(companyId, id, { attributes: { [action.key as string]: action.value } }, { cause });
        return;
      case 'send_message':
        return this.send(companyId, id, ruleId, action, options);
      case 'add_note':
        await this.notes.addByRule(companyId, id, action.text as string, { dedupeKey: options.dedupeKey, cause });
        return;
      case 'snooze': {
        // From the run's start, so that an action run again after a crash asks for the same wake-up.
        const until = new Date(run.createdAt.getTime() + parseDuration(action.for)!);
        await this.snoozes.snooze(companyId, id, until, { cause });
        return;
      }
      case 'close':
        await this.conversations.close(companyId, conversation, (action.reason as string | undefined) ?? undefined, {
          eventId: options.eventId,
          cause,
        });
        return;
      case 'run_flow': {
        const flow = await this.flows.findById(companyId, action.flowId as string);
        if (!flow) throw new HttpException(`Flow ${String(action.flowId)} no longer exists`, 400);
        const conversation = await this.conversations.getOrThrow(companyId, id);
        // Keyed by the action of the run: asked again after a crash, the flow's run is found (and resumed), not doubled.
        await this.flowRunner.runOnce(companyId, flow, { id, channel: conversation.channel }, options.dedupeKey, 'manual');
        return;
      }
    }
  }

  private async send(
    companyId: CompanyId,
    id: string,
    ruleId: string,
    action: RuleAction,
    options: { eventId: string; dedupeKey: string; cause: EventCause },
  ): Promise<void> {
    if (await this.messageRecords.existsWithDedupeKey(companyId, options.dedupeKey)) return;
    const sender = { type: 'bot', id: ruleId } as const;
    const sendOptions = { dedupeKey: options.dedupeKey, eventId: options.eventId, cause: options.cause };
    if (action.template !== undefined) {
      await this.messages.sendTemplate(companyId, id, action.template as SendTemplateDto, sender, sendOptions);
      return;
    }
    let text = action.text as string | undefined;
    if (action.cannedResponseId !== undefined) {
      const contact = (await this.conversations.getOrThrow(companyId, id)).contact;
      text = await this.cannedResponses.render(
        companyId,
        action.cannedResponseId as string,
        { 'contact.name': contact?.name, 'contact.phone': contact?.phone, 'contact.email': contact?.email },
        'cannedResponseId',
      );
    }
    await this.messages.sendText(companyId, id, text!, sender, sendOptions);
  }

  /** Whether an action of a run that died was applied: its message, or its event (pending or logged). */
  private async wasApplied(
    companyId: CompanyId,
    conversationId: string,
    action: RuleAction,
    keys: { eventId: string; dedupeKey: string },
  ): Promise<boolean> {
    switch (action.type) {
      case 'send_message':
      case 'add_note':
        return this.messageRecords.existsWithDedupeKey(companyId, keys.dedupeKey);
      case 'handoff':
      case 'close':
        return (
          (await this.conversationRecords.hasPendingEvent(companyId, conversationId, keys.eventId)) ||
          (await this.log.exists(companyId, keys.eventId))
        );
      default:
        return false;
    }
  }
}
