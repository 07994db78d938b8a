// The server's REST endpoints and its error shape, for what useChat does not cover.
import type { UIMessage } from 'ai';
import type { components } from './api-schema';
import { apiFetch } from './auth';

export type MessageMetadata = {
  createdAt?: string;
  finishedAt?: string;
  model?: string;
  interrupted?: string;
  traceId?: string;
  profile?: string;
  feedback?: Feedback;
  comparisonId?: string; // one of an A/B comparison's two answers
  version?: number; // an edited message or a regenerated answer: the version shown (from 1)…
  versions?: number; // …of how many
};
/** What a tool reports while it runs (`data-tool-progress`, transient). */
export type ToolProgress = { toolCallId: string; progress: number; total?: number; message?: string };

/** What the agent asks the person (`interrupt(value)`); the reply resumes the answer. */
// `reply`: what the person answered, kept with the answer once it went on (a reloaded history has it).
export type AgentQuestion = { id: string; value: unknown; reply?: unknown };

/** The server's `data-*` parts, by name: what `onData` and a message's parts carry, typed. An agent of a team's
 * own may send parts of any other name too (docs/guides/agents.md): the page shows them as notes. */
export type DataParts = {
  status: { text: string };
  warning: { code: string; message: string };
  title: { title: string }; // a new conversation's title, written by its model after the first answer
  'tool-progress': ToolProgress;
  suggestions: Suggestions;
  interrupt: AgentQuestion;
  // a call that waits: the decisions it allows (`edit`: its input may be changed first), and why it asks
  approval: { toolCallId: string; decisions: string[]; reason?: string };
  'structured-response': unknown; // a `response_format` agent's typed answer (create_agent's structured_response)
};

export type ChatMessage = UIMessage<MessageMetadata, DataParts>;

// The REST bodies, as the server's OpenAPI schema says (api-schema.d.ts, generated: `npm run api-types`).
type Schemas = components['schemas'];
export type ConversationSummary = Schemas['ConversationSummary'];
/** The server's error codes (its error table), or HTTP_ERROR for an answer that is not the server's JSON. */
export type ErrorCode = Schemas['ErrorInfo']['code'] | 'HTTP_ERROR';

/** A refused request: the server's `{error: {code, message, retryAfter?}}` with its HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export async function errorFrom(response: Response): Promise<ApiError> {
  let code: ErrorCode = 'HTTP_ERROR';
  let message = `The server answered ${response.status}.`;
  let retryAfter = Number(response.headers.get('retry-after')) || undefined;
  try {
    const body = await response.json();
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
    retryAfter = retryAfter ?? body.error?.retryAfter;
  } catch {
    // not JSON: keep the generic message
  }
  return new ApiError(response.status, code, message, retryAfter);
}

/** fetch for the chat transport: a refused request becomes an ApiError instead of its raw body. */
export const chatFetch: typeof fetch = async (input, init) => {
  const response = await apiFetch(input, init);
  if (!response.ok) throw await errorFrom(response);
  return response;
};

/** One page of the sidebar's list: conversations, and the URL of the next page when there is one. */
export type ConversationPage = { conversations: ConversationSummary[]; next: string | null };

/** The visitor's conversations matching `query` (every word, or its beginning), newest activity first; `from`
 * is the `next` of the page before. */
export async function listConversations(query = '', limit = 50, from?: string | null): Promise<ConversationPage> {
  const params = new URLSearchParams({ limit: String(limit), ...(query.trim() ? { q: query.trim() } : {}) });
  const response = await apiFetch(from ?? `/api/conversations?${params}`);
  if (!response.ok) throw await errorFrom(response);
  const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '');
  return { conversations: await response.json(), next: next ? next[1] : null };
}

/** How many conversations this browser's anonymous identity has: asked without the user's token. */
export async function anonymousConversations(): Promise<number> {
  const response = await fetch('/api/conversations');
  return response.ok ? (await response.json()).length : 0;
}

export type Claimed = Schemas['Claimed'];

/** Signed in, take the anonymous identity's conversations (its cookie goes along): those that moved, and those
 * skipped because the account has a conversation with the same id (they stay with the anonymous identity). */
export async function claimConversations(): Promise<Claimed> {
  const response = await apiFetch('/api/account/claim', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

/** The conversation's messages, or none for an id the server does not know yet (a new chat). */
export async function loadConversation(id: string): Promise<ChatMessage[]> {
  const response = await apiFetch(`/api/conversations/${encodeURIComponent(id)}`);
  if (response.status === 404) return [];
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()).messages;
}

/** Show version `version` (from 1) of an edited message or a regenerated answer; the conversation as it now is. */
export async function showVersion(id: string, messageId: string, version: number): Promise<ChatMessage[]> {
  const response = await apiFetch(`/api/conversations/${encodeURIComponent(id)}/versions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messageId, version }),
  });
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()).messages;
}

/** A conversation's read-only link (`url` is the page's path), and when its snapshot was taken. */
export type Share = Schemas['Share'];
export type Shared = Omit<Schemas['Shared'], 'messages'> & { messages: ChatMessage[] }; // UIMessages, as useChat's

const sharePath = (id: string) => `/api/conversations/${encodeURIComponent(id)}/share`;

/** Share a snapshot of the conversation as it is now (again: the same link, brought up to date). */
export async function shareConversation(id: string): Promise<Share> {
  const response = await apiFetch(sharePath(id), { method: 'POST' });
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

/** The conversation's link, or null when it is not shared. */
export async function shareOf(id: string): Promise<Share | null> {
  const response = await apiFetch(sharePath(id));
  if (response.status === 204 || response.status === 404) return null; // not shared; a 404: not (any more) ours
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

export async function stopSharing(id: string): Promise<void> {
  const response = await apiFetch(sharePath(id), { method: 'DELETE' });
  if (!response.ok && response.status !== 404) throw await errorFrom(response);
}

/** What a link shows, or null when there is no such link (any more). */
export async function loadShared(shareId: string): Promise<Shared | null> {
  const response = await fetch(`/api/shared/${encodeURIComponent(shareId)}`);
  if (response.status === 404 || response.status === 400) return null;
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

export async function renameConversation(id: string, title: string): Promise<ConversationSummary> {
  const response = await apiFetch(`/api/conversations/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

/** `keepalive`: the request outlives the page (a deletion whose undo time is cut short by leaving). */
export async function deleteConversation(id: string, keepalive = false): Promise<void> {
  const response = await apiFetch(`/api/conversations/${encodeURIComponent(id)}`, { method: 'DELETE', keepalive });
  if (!response.ok && response.status !== 404) throw await errorFrom(response);
}

/** What the error banner says: the server's own words, or the rate limit's wait. */
export function describeError(error: Error): string {
  if (error instanceof ApiError && error.status === 429) {
    return `Too many requests — try again in ${error.retryAfter ?? 60} s.`;
  }
  if (error instanceof ApiError) return inPlainWords(error);
  if (error.message === 'Failed to fetch' || error.name === 'TypeError') {
    return 'The server cannot be reached. Check your connection and try again.';
  }
  return error.message || 'Something went wrong. Please try again.';
}

/** A refusal as the page says it: the server's words, which speak to API clients too, without what only they
 * need (the "Invalid request:" of a validation error, the vote's endpoint, a bare status). */
function inPlainWords(error: ApiError): string {
  if (error.code === 'VOTE_REQUIRED') return 'Pick the better of the two answers above first.';
  if (error.code === 'HTTP_ERROR') return `The server could not answer (${error.status}). Please try again in a moment.`;
  return error.message.replace(/^Invalid request: /, '');
}

/** 32 random hex digits. Not crypto.randomUUID: it exists only in secure contexts (https or localhost), and
 * the page is also opened over plain HTTP on a LAN address or a container's name. */
export function newConversationId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export type Feedback = Schemas['Feedback'];
export type Rating = Feedback['rating'];

/** Rate an answer (again to change it); the server keeps one rating per answer. */
export async function rateAnswer(messageId: string, rating: Rating, comment?: string): Promise<Feedback> {
  const response = await apiFetch(`/api/messages/${encodeURIComponent(messageId)}/feedback`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(comment ? { rating, comment } : { rating }),
  });
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

export async function clearRating(messageId: string): Promise<void> {
  const response = await apiFetch(`/api/messages/${encodeURIComponent(messageId)}/feedback`, { method: 'DELETE' });
  if (!response.ok) throw await errorFrom(response);
}

export type Profile = Schemas['PublicProfile'];

/** The model profiles a new conversation may use (one: nothing to pick). */
export async function listProfiles(): Promise<Profile[]> {
  const response = await apiFetch('/api/profiles');
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

export type Agent = Schemas['PublicAgent'];

/** The agents a new conversation may go to, the default first (one: nothing to pick). */
export async function listAgents(): Promise<Agent[]> {
  const response = await apiFetch('/api/agents');
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

export type ComparedAnswer = Schemas['ComparedAnswer']; // `text` is absent while it is being written
export type ComparisonRecord = Schemas['Comparison'];
export type Preference = NonNullable<ComparisonRecord['preference']>;

/** An A/B comparison: both answers (their texts once written) and the vote. */
export async function getComparison(id: string): Promise<ComparisonRecord> {
  const response = await apiFetch(`/api/comparisons/${encodeURIComponent(id)}`);
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

export async function voteComparison(id: string, preference: Preference): Promise<void> {
  const response = await apiFetch(`/api/comparisons/${encodeURIComponent(id)}/vote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ preference }),
  });
  if (!response.ok) throw await errorFrom(response);
}

/** Stop whatever answers a conversation has streaming (both of an A/B comparison). */
export async function stopAnswers(conversationId: string): Promise<void> {
  await apiFetch(`/api/chat/${encodeURIComponent(conversationId)}/stream`, { method: 'DELETE' });
}

export type SuggestedValue = Schemas['SuggestedValue'];
export type SuggestedAction = Schemas['SuggestedAction'];
export type Suggestions = { values: SuggestedValue[]; actions: SuggestedAction[] };

/** The suggestions an answer ended with (its `data-suggestions` part), if any. */
export function suggestionsOf(message: ChatMessage): Suggestions | undefined {
  for (const part of message.parts) if (part.type === 'data-suggestions') return part.data;
  return undefined;
}

/** What a server action answered: its result, or (continued) the message it sent and the answer to resume. */
export type ActionOutcome =
  | { kind: 'result'; message: string; result: Record<string, unknown> }
  | { kind: 'continued'; userMessageId: string | null; text: string | null; messageId: string };

/** Run a suggested server action; an action that continues the conversation is read by resuming its stream. */
export async function runAction(
  conversationId: string,
  messageId: string,
  action: SuggestedAction,
): Promise<ActionOutcome> {
  const response = await apiFetch('/api/actions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      conversationId,
      messageId,
      action: action.action,
      data: action.data ?? undefined,
      detach: true,
      streamMode: 'events',
    }),
  });
  if (!response.ok) throw await errorFrom(response);
  const body = await response.json();
  return response.status === 202 ? { kind: 'continued', ...body } : { kind: 'result', ...body };
}
