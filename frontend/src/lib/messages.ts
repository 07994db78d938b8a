// What the page reads off and writes into useChat's messages: the transport that sends only the new one,
// an answer's text, and the decline of calls that wait when a new message goes out.
import { DefaultChatTransport } from 'ai';
import { type ChatMessage, chatFetch, suggestionsOf } from './api';

/** POST /api/chat with only the new message: the server keeps the history. Events mode: the page shows
 * statuses, reasoning and tool arguments as they are generated. `body` carries the profile picked for a new
 * conversation (the server remembers it after that). The answer outlives this page's request: a reload or
 * another conversation picks it up again; only Stop ends it. */
export function chatTransport(): DefaultChatTransport<ChatMessage> {
  return new DefaultChatTransport<ChatMessage>({
    api: '/api/chat',
    fetch: chatFetch,
    prepareSendMessagesRequest: ({ id, messages, trigger, messageId, body }) => ({
      body: {
        ...body,
        id,
        messages: messages.slice(-1),
        trigger,
        messageId,
        streamMode: 'events',
        onDisconnect: 'continue',
      },
    }),
  });
}

export function textOf(message: ChatMessage): string {
  return message.parts
    .map((part, index) => (part.type === 'text' && !isHandoffWords(message.parts, index) ? part.text : ''))
    .join('\n\n');
}

/** The agent a team's handoff tool hands the conversation to (langgraph-supervisor's and -swarm's
 * `transfer_to_<agent>`, `transfer_back_to_<agent>`), from its part's type. */
export function handoffTarget(type: string): string | undefined {
  return /^tool-transfer_(?:back_)?to_(.+)$/.exec(type)?.[1];
}

/** The words a handoff writes beside its call ("Transferring back to supervisor", langgraph-supervisor's
 * handoff-back message): the handoff's own line says it, so they are not the agent's answer. */
export function isHandoffWords(parts: ChatMessage['parts'], index: number): boolean {
  const part = parts[index];
  if (part?.type !== 'text' || !/^\s*transferring (back )?to \S+\s*$/i.test(part.text)) return false;
  const next = parts.slice(index + 1).find((later) => later.type !== 'step-start' && later.type !== 'reasoning');
  return next !== undefined && handoffTarget(next.type) !== undefined;
}

/** The answer with its calls that wait for approval declined, as the server declines them when a new message
 * arrives (so the card says why); null when none waits. */
export function withWaitingDeclined(answer: ChatMessage): ChatMessage | null {
  const declined = answer.parts.map((part) =>
    'approval' in part && part.state === 'approval-requested' && part.approval
      ? {
          ...part,
          state: 'output-denied' as const,
          approval: { ...part.approval, approved: false, reason: 'superseded by a new message' },
        }
      : part,
  );
  return declined.some((part, index) => part !== answer.parts[index])
    ? ({ ...answer, parts: declined } as ChatMessage)
    : null;
}

/** The answer with one waiting call approved with a changed input (`approval.editedInput`, threadline's
 * extension of the AI SDK's approval response). */
export function withEditedInput(answer: ChatMessage, approvalId: string, editedInput: unknown): ChatMessage {
  const parts = answer.parts.map((part) =>
    'approval' in part && part.state === 'approval-requested' && part.approval?.id === approvalId
      ? { ...part, state: 'approval-responded' as const, approval: { id: approvalId, approved: true, editedInput } }
      : part,
  );
  return { ...answer, parts } as ChatMessage;
}

/** What the newest answer is doing, as the page shows it while `busy` (an answer streams). */
export function answerState(messages: ChatMessage[], busy: boolean) {
  const last = messages.at(-1);
  const answer = last?.role === 'assistant' ? last : undefined;
  // Reasoning shows its own "Thinking…": one indicator at a time.
  const showsNothing =
    !answer || !answer.parts.some((part) => ['text', 'reasoning'].includes(part.type) || part.type.startsWith('tool-'));
  const comparison = answer?.metadata?.comparisonId;
  // The agent's question waits for a reply in its card: a message written below instead skips it, so say so.
  const parts = answer?.parts ?? [];
  const asked = parts.findLastIndex((part) => part.type === 'data-interrupt');
  return {
    answer,
    comparison,
    thinking: busy && showsNothing && !comparison, // a comparison shows its own
    suggested: answer ? suggestionsOf(answer) : undefined,
    questionWaits: !busy && asked >= 0 && parts.slice(asked + 1).every((part) => part.type === 'step-start'),
    // A tool call waits for the person's approval on its card: a message written below declines it, so say so.
    approvalWaits:
      !busy && parts.some((part) => part.type.startsWith('tool-') && 'state' in part && part.state === 'approval-requested'),
    // The profile the conversation went on with: the next message goes to it unless another is picked.
    answeredBy: messages.findLast((message) => message.role === 'assistant' && message.metadata?.profile)?.metadata
      ?.profile,
  };
}
