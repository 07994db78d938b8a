// One conversation: useChat on /api/chat, sending only the new message (the server keeps the history).
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import {
  ApiError,
  type ChatMessage,
  type Profile,
  chatFetch,
  describeError,
  loadConversation,
  runAction,
  type SuggestedAction,
  stopAnswers,
  suggestionsOf,
} from '../lib/api';
import { Comparison } from './Comparison';
import { Composer } from './Composer';
import { Message, type ToolProgress } from './Message';
import { Suggestions } from './Suggestions';

const EXAMPLES = ['calculate (17 * 23) + 4', 'What time is it in Asia/Tokyo?', 'count to 20', 'think about tide pools'];

type Props = {
  id: string;
  initialMessages: ChatMessage[];
  profiles: Profile[];
  onFirstMessage: () => void;
  onAnswered: () => void;
  onNewChat: () => void;
};

type DataPart = { type: string; data: Record<string, unknown> };

/** What an answer's meta line names: its profile's label, or the model the server reported. */
function labelOf(message: ChatMessage, profiles: Profile[]): string | undefined {
  const profile = profiles.find((candidate) => candidate.id === message.metadata?.profile);
  return profiles.length > 1 ? (profile?.label ?? message.metadata?.model) : undefined;
}

function textOf(message: ChatMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('\n\n');
}

export function Chat({ id, initialMessages, profiles, onFirstMessage, onAnswered, onNewChat }: Props) {
  const [profileId, setProfileId] = useState<string | null>(null); // null: the default one
  const [statusText, setStatusText] = useState<string | null>(null);
  const [warning, setWarning] = useState<string | null>(null);
  const [progress, setProgress] = useState<Record<string, ToolProgress>>({});
  const [stopped, setStopped] = useState<Set<string>>(new Set());
  const [unvoted, setUnvoted] = useState<Record<string, boolean>>({}); // A/B comparisons by id
  const [acting, setActing] = useState(false); // a server action is on its way
  const [now, setNow] = useState(() => Date.now()); // ticks while a rate limit's wait counts down
  const endRef = useRef<HTMLDivElement>(null);
  // The messages as they were before a Retry that writes the answer again: put back if it cannot even start.
  const beforeRetry = useRef<ChatMessage[] | null>(null);

  const transport = useMemo(
    () =>
      new DefaultChatTransport<ChatMessage>({
        api: '/api/chat',
        fetch: chatFetch,
        // Events mode: the page shows statuses, reasoning and tool arguments as they are generated.
        // `body` carries the profile picked for a new conversation; the server remembers it after that.
        // The answer outlives this page's request: a reload or another conversation picks it up again;
        // only Stop ends it.
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
      }),
    [],
  );

  const {
    messages,
    sendMessage,
    regenerate,
    setMessages,
    stop,
    status,
    error,
    clearError,
    addToolApprovalResponse,
    resumeStream,
  } = useChat<ChatMessage>({
    id,
    messages: initialMessages,
    transport,
    // An answer still being written (a reload, another tab) is picked up from GET /api/chat/{id}/stream.
    resume: initialMessages.length > 0,
    // Once every call that waits has an answer, the responses go back and the server resumes the answer.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onData: (part) => {
      const { type, data } = part as DataPart;
      if (type === 'data-status') setStatusText(String(data.text));
      if (type === 'data-warning') setWarning(String(data.message));
      if (type === 'data-tool-progress') {
        setProgress((current) => ({ ...current, [String(data.toolCallId)]: data as unknown as ToolProgress }));
      }
    },
    onFinish: ({ isError }) => {
      if (!isError) beforeRetry.current = null; // a failed one leaves the restoring to the effect below
      setStatusText(null);
      onAnswered();
    },
    onError: () => {
      setStatusText(null);
      onAnswered();
    },
  });

  // A Retry that could not reach the server (it is still down) keeps the partial answer it would replace.
  useEffect(() => {
    const snapshot = beforeRetry.current;
    if (!error || !snapshot) return;
    beforeRetry.current = null;
    const last = messages.at(-1);
    if (last?.role !== 'assistant' || last.parts.length === 0) setMessages(snapshot);
  }, [error, messages, setMessages]);

  // A rate limit says when to try again: count down to it, and Retry waits for it.
  const retryAt = useMemo(
    () => (error instanceof ApiError && error.status === 429 ? Date.now() + (error.retryAfter ?? 60) * 1000 : null),
    [error],
  );
  useEffect(() => {
    if (retryAt === null) return;
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [retryAt]);
  const waitLeft = retryAt === null ? 0 : Math.max(0, Math.ceil((retryAt - now) / 1000));

  const busy = status === 'submitted' || status === 'streaming';
  const last = messages.at(-1);
  const answerShowsNothing =
    last?.role !== 'assistant' || !last.parts.some((part) => part.type === 'text' || part.type.startsWith('tool-'));
  const lastComparison = last?.role === 'assistant' ? last.metadata?.comparisonId : undefined;
  const waitingForVote = Boolean(lastComparison && unvoted[lastComparison] !== false);
  const thinking = busy && answerShowsNothing && !lastComparison; // a comparison shows its own

  useEffect(() => {
    endRef.current?.scrollIntoView({ block: 'end' });
  }, [messages, thinking]);

  const send = (text: string, extra?: Record<string, string>) => {
    if (messages.length === 0) onFirstMessage();
    setWarning(null);
    declineWaiting();
    const body = { ...(messages.length === 0 && profileId ? { profileId } : {}), ...extra };
    void sendMessage({ text, metadata: { createdAt: new Date().toISOString() } }, { body });
  };

  /** A new message declines the tool calls that wait for approval (the server does so): the card says why. */
  const declineWaiting = () => {
    const answer = messages.at(-1);
    if (answer?.role !== 'assistant') return;
    const declined = answer.parts.map((part) =>
      'approval' in part && part.state === 'approval-requested' && part.approval
        ? { ...part, state: 'output-denied' as const, approval: { ...part.approval, approved: false, reason: 'superseded by a new message' } }
        : part,
    );
    if (declined.some((part, index) => part !== answer.parts[index])) {
      setMessages([...messages.slice(0, -1), { ...answer, parts: declined } as ChatMessage]);
    }
  };

  const stopAnswer = () => {
    const answer = messages.at(-1);
    if (answer?.role === 'assistant') setStopped((current) => new Set(current).add(answer.id));
    // The server stops the answer itself: closing the stream alone does not when it runs on after a
    // disconnect (CHAT_ON_DISCONNECT=continue), and answer B of a comparison streams on a request of its own.
    void stopAnswers(id);
    void stop();
  };

  /** A suggested action: the page's own (a new chat, a copy), or the server's, whose answer is resumed. */
  const act = async (answer: ChatMessage, action: SuggestedAction) => {
    setWarning(null);
    if (action.handler === 'client') {
      if (action.action === 'new_chat') onNewChat();
      else if (action.action === 'copy_answer') {
        await navigator.clipboard?.writeText(textOf(answer)).catch(() => undefined);
        setWarning('Copied the answer.');
      } else setWarning(`This page cannot do “${action.label}”.`);
      return;
    }
    setActing(true);
    try {
      const outcome = await runAction(id, answer.id, action);
      if (outcome.kind === 'result') {
        setWarning(outcome.message || `Done: ${action.label}.`);
        return;
      }
      const asked: ChatMessage | null = outcome.userMessageId
        ? { id: outcome.userMessageId, role: 'user', parts: [{ type: 'text', text: outcome.text ?? '' }] }
        : null;
      // A new question goes after the answer; an answer written again replaces it.
      setMessages(asked ? [...messages, asked] : messages.slice(0, -1));
      await resumeStream();
      setMessages(await loadConversation(id)); // also when the answer ended before the stream was asked for
      onAnswered();
    } catch (failure) {
      setWarning(describeError(failure as Error));
    } finally {
      setActing(false);
    }
  };

  const answerApproval = (approvalId: string, approved: boolean, reason?: string) =>
    void addToolApprovalResponse({ id: approvalId, approved, reason });

  const onPending = useCallback(
    (comparisonId: string, pending: boolean) => setUnvoted((current) => ({ ...current, [comparisonId]: pending })),
    [],
  );
  const onVoted = useCallback(() => {
    loadConversation(id).then(setMessages, () => undefined);
    onAnswered();
  }, [id, setMessages, onAnswered]);


  const retry = (extra?: Record<string, string>) => {
    clearError();
    if (error instanceof ApiError && error.status < 500) {
      // Refused before the server took it (rate limit, busy, invalid): send the question again.
      const index = messages.findLastIndex((message) => message.role === 'user');
      const question = messages[index];
      const text = question?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
      setMessages(messages.slice(0, index));
      if (text) send(text, extra);
    } else {
      beforeRetry.current = messages;
      void regenerate();
    }
  };
  const refused = error instanceof ApiError && error.status < 500; // the question never reached the model
  // Refused because an answer is still running here (another tab, say): stop it and send this one.
  const busyElsewhere = error instanceof ApiError && error.status === 409 && error.code === 'CONFLICT';

  return (
    <section className="chat" aria-label="Conversation">
      <div className="messages" role="log" aria-live="polite" aria-busy={busy}>
        {messages.length === 0 && !busy ? (
          <div className="welcome">
            <h1>How can I help?</h1>
            <p className="muted">Ask anything, or start with one of these:</p>
            <ul className="examples" aria-label="Example prompts">
              {EXAMPLES.map((example) => (
                <li key={example}>
                  <button type="button" className="chip" data-testid="example-prompt" onClick={() => send(example)}>
                    {example}
                  </button>
                </li>
              ))}
            </ul>
            {profiles.length > 1 && (
              <label className="model-picker">
                Model{' '}
                <select
                  data-testid="model-picker"
                  value={profileId ?? profiles.find((profile) => profile.default)?.id}
                  onChange={(event) => setProfileId(event.target.value)}
                >
                  {profiles.map((profile) => (
                    <option key={profile.id} value={profile.id}>
                      {profile.label}
                    </option>
                  ))}
                </select>
              </label>
            )}
          </div>
        ) : (
          messages.map((message) =>
            message.role === 'assistant' && message.metadata?.comparisonId ? (
              <Comparison
                key={message.id}
                comparisonId={message.metadata.comparisonId}
                answer={message}
                streaming={busy && message === last}
                profiles={profiles}
                progress={progress}
                onPending={onPending}
                onVoted={onVoted}
              />
            ) : (
              <Message
                key={message.id}
                message={message}
                progress={progress}
                stopped={stopped.has(message.id)}
                failed={Boolean(error) && message === last && message.role === 'assistant'}
                notSent={refused && message === last && message.role === 'user'}
                streaming={busy && message === last}
                modelLabel={labelOf(message, profiles)}
                onApproval={busy ? undefined : answerApproval}
              />
            ),
          )
        )}
        {!busy && !acting && last?.role === 'assistant' && !lastComparison && suggestionsOf(last) && (
          <Suggestions
            suggestions={suggestionsOf(last)!}
            onReply={(value) => send(value)}
            onAction={(action) => void act(last, action)}
          />
        )}
        {thinking && (
          <div className="thinking" role="status" data-testid="thinking">
            <span className="dots" aria-hidden="true" />
            {statusText ?? 'Thinking…'}
          </div>
        )}
        <div ref={endRef} />
      </div>
      {warning && (
        <div className="notice" role="status" data-testid="notice">
          {warning}
        </div>
      )}
      {error && (
        <div className="banner error" role="alert">
          <span>{retryAt === null ? describeError(error) : `Too many requests — try again in ${waitLeft} s.`}</span>
          <button type="button" onClick={() => retry()} disabled={waitLeft > 0}>
            Retry
          </button>
          {busyElsewhere && (
            <button type="button" onClick={() => retry({ multitaskStrategy: 'interrupt' })}>
              Send anyway
            </button>
          )}
        </div>
      )}
      <Composer
        busy={busy || acting}
        locked={waitingForVote ? 'Vote above to go on' : undefined}
        onSend={send}
        onStop={stopAnswer}
      />
    </section>
  );
}
