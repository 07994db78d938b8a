// One conversation: useChat on /api/chat, sending only the new message (the server keeps the history).
import { useChat } from '@ai-sdk/react';
import { type FileUIPart, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import {
  type Agent,
  ApiError,
  type ChatMessage,
  type Profile,
  describeError,
  loadConversation,
  runAction,
  showVersion,
  type SuggestedAction,
  stopAnswers,
  suggestionsOf,
  type ToolProgress,
} from '../lib/api';
import { useCountdown } from '../hooks/useCountdown';
import { copyText } from '../lib/clipboard';
import { forgetOutgoing, rememberOutgoing, restoreOutgoing } from '../lib/drafts';
import { chatTransport, textOf, withEditedInput, withWaitingDeclined } from '../lib/messages';
import { ChatHeader } from './ChatHeader';
import { Composer } from './Composer';
import { ErrorBanner } from './ErrorBanner';
import { Messages } from './Messages';
import { Suggestions } from './Suggestions';
import { Welcome } from './Welcome';

type Props = {
  id: string;
  initialMessages: ChatMessage[];
  profiles: Profile[];
  agents: Agent[];
  agentId?: string; // the agent a started conversation keeps
  onFirstMessage: (text: string) => void;
  onTitle: (title: string) => void;
  onAnswered: () => void;
  onNewChat: () => void;
  hold?: string; // why nothing may be sent yet (the page asks something first)
  title?: string; // the conversation's, as listed: its heading for screen readers
};

export function Chat(props: Props) {
  const { id, initialMessages, profiles, agents, onFirstMessage, onTitle, onAnswered, onNewChat, hold, title } = props;
  const [profileId, setProfileId] = useState<string | null>(null); // null: the default one
  const [pickedAgent, setPickedAgent] = useState<string | null>(null); // a new conversation's; null: the default
  const [statusText, setStatusText] = useState<string | null>(null);
  const [warning, setWarning] = useState<string | null>(null);
  const [progress, setProgress] = useState<Record<string, ToolProgress>>({});
  const [stopped, setStopped] = useState<Set<string>>(new Set());
  const [unvoted, setUnvoted] = useState<Record<string, boolean>>({}); // A/B comparisons by id
  const [acting, setActing] = useState(false); // a server action is on its way
  const [retryAt, setRetryAt] = useState<number | null>(null); // when a rate limit lets the last message through
  // A message the server never took before the page went away is back in the box: say so once.
  const [unsentBack] = useState(() => {
    const lastQuestion = initialMessages.findLast((message) => message.role === 'user');
    return restoreOutgoing(id, lastQuestion ? textOf(lastQuestion) : undefined);
  });
  const endRef = useRef<HTMLDivElement>(null);
  const logRef = useRef<HTMLDivElement>(null);
  // The answer is followed only while the reader is at the bottom: scrolling up to read stays put.
  const [atBottom, setAtBottom] = useState(true);
  const onScroll = () => {
    const log = logRef.current;
    if (log) setAtBottom(log.scrollHeight - log.scrollTop - log.clientHeight < 48);
  };
  // The messages as they were before a Retry that writes the answer again: put back if it cannot even start.
  const beforeRetry = useRef<ChatMessage[] | null>(null);
  // An edit or a regenerated answer made a version: once answered, the conversation is read again for its counts.
  const versioned = useRef(false);
  const [recount, setRecount] = useState(0);

  const transport = useMemo(() => chatTransport(), []);

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
      if (part.type === 'data-status') setStatusText(part.data.text);
      if (part.type === 'data-warning') setWarning(part.data.message);
      if (part.type === 'data-title') onTitle(part.data.title);
      if (part.type === 'data-tool-progress') {
        const report: ToolProgress = part.data;
        setProgress((current) => ({ ...current, [report.toolCallId]: report }));
      }
    },
    onFinish: ({ isError }) => {
      if (!isError) beforeRetry.current = null; // a failed one leaves the restoring to the effect below
      if (!isError) forgetOutgoing(id);
      setStatusText(null);
      if (versioned.current) {
        versioned.current = false;
        setRecount((count) => count + 1);
      }
      onAnswered();
    },
    onError: (failure) => {
      // A rate limit says when to try again: count down to it, and Retry waits for it.
      const limited = failure instanceof ApiError && failure.status === 429;
      setRetryAt(limited ? Date.now() + (failure.retryAfter ?? 60) * 1000 : null);
      setStatusText(null);
      onAnswered();
    },
  });

  useEffect(() => {
    if (recount > 0) loadConversation(id).then(setMessages, () => undefined);
  }, [recount, id, setMessages]);

  /** An edit: the message is sent again in place (useChat drops what followed); the server keeps the old branch. */
  const edit = useCallback(
    (message: ChatMessage, text: string) => {
      setAtBottom(true);
      setWarning(null);
      versioned.current = true;
      const files = message.parts.filter((part): part is FileUIPart => part.type === 'file');
      const metadata = { createdAt: new Date().toISOString() };
      void sendMessage({ text, messageId: message.id, metadata, ...(files.length ? { files } : {}) });
    },
    [sendMessage],
  );

  const regenerateAnswer = useCallback(
    (message: ChatMessage) => {
      setWarning(null);
      versioned.current = true;
      void regenerate({ messageId: message.id });
    },
    [regenerate],
  );

  const showVersionOf = useCallback(
    (message: ChatMessage, version: number) => {
      showVersion(id, message.id, version).then(setMessages, (failure: Error) => setWarning(describeError(failure)));
    },
    [id, setMessages],
  );

  // A Retry that could not reach the server (it is still down) keeps the partial answer it would replace.
  useEffect(() => {
    const snapshot = beforeRetry.current;
    if (!error || !snapshot) return;
    beforeRetry.current = null;
    const last = messages.at(-1);
    if (last?.role !== 'assistant' || last.parts.length === 0) setMessages(snapshot);
  }, [error, messages, setMessages]);

  const waitLeft = useCountdown(error ? retryAt : null);

  const busy = status === 'submitted' || status === 'streaming';
  const last = messages.at(-1);
  // Reasoning shows its own "Thinking…": one indicator at a time.
  const answerShowsNothing =
    last?.role !== 'assistant' ||
    !last.parts.some((part) => ['text', 'reasoning'].includes(part.type) || part.type.startsWith('tool-'));
  const lastComparison = last?.role === 'assistant' ? last.metadata?.comparisonId : undefined;
  const waitingForVote = Boolean(lastComparison && unvoted[lastComparison] !== false);
  const thinking = busy && answerShowsNothing && !lastComparison; // a comparison shows its own

  const suggested = last?.role === 'assistant' ? suggestionsOf(last) : undefined;
  // The agent's question waits for a reply in its card: a message written below instead skips it, so say so.
  const lastParts = last?.role === 'assistant' ? last.parts : [];
  const asked = lastParts.findLastIndex((part) => part.type === 'data-interrupt');
  const questionWaits = !busy && asked >= 0 && lastParts.slice(asked + 1).every((part) => part.type === 'step-start');
  // The profile the conversation went on with: the next message goes to it unless another is picked.
  const answeredBy = messages.findLast((message) => message.role === 'assistant' && message.metadata?.profile)
    ?.metadata?.profile;

  useEffect(() => {
    if (atBottom) endRef.current?.scrollIntoView({ block: 'end' });
  }, [messages, thinking, atBottom]);

  // The on-screen keyboard (or a rotated phone) shrinks the viewport: a reader at the newest message stays there.
  useEffect(() => {
    const viewport = window.visualViewport;
    if (!atBottom || !viewport) return;
    const follow = () => endRef.current?.scrollIntoView({ block: 'end' });
    viewport.addEventListener('resize', follow);
    return () => viewport.removeEventListener('resize', follow);
  }, [atBottom]);

  const send = (text: string, extra?: Record<string, string>, files?: FileUIPart[]) => {
    if (hold) return; // the chips and suggested replies wait too
    if (messages.length === 0) onFirstMessage(text || files?.[0]?.filename || '');
    setAtBottom(true); // one's own message is always followed
    setWarning(null);
    declineWaiting();
    const agent = messages.length === 0 && pickedAgent ? { agent: pickedAgent } : {}; // later ones keep it
    const body = { ...(profileId ? { profileId } : {}), ...agent, ...extra };
    const metadata = { createdAt: new Date().toISOString() };
    const message = !files?.length ? { text, metadata } : text ? { text, files, metadata } : { files, metadata };
    rememberOutgoing(id, { text, files: files ?? [] }); // until the server has taken it
    void sendMessage(message, { body });
  };

  /** A new message declines the tool calls that wait for approval (the server does so): the card says why. */
  const declineWaiting = () => {
    const answer = messages.at(-1);
    const declined = answer?.role === 'assistant' ? withWaitingDeclined(answer) : null;
    if (declined) setMessages([...messages.slice(0, -1), declined]);
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
        setWarning((await copyText(textOf(answer).trim())) ? 'Copied the answer.' : 'Could not copy the answer.');
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

  const answerApproval = useCallback(
    (approvalId: string, approved: boolean, reason?: string, editedInput?: unknown) => {
      if (editedInput === undefined) {
        void addToolApprovalResponse({ id: approvalId, approved, reason });
        return;
      }
      // threadline's extension (the AI SDK has none): the approval carries the changed input. It goes back with
      // the others' answers; once every call that waits has one, the answer goes on.
      const answer = messages.at(-1);
      if (!answer) return;
      const answered = withEditedInput(answer, approvalId, editedInput);
      setMessages([...messages.slice(0, -1), answered]);
      if (lastAssistantMessageIsCompleteWithApprovalResponses({ messages: [answered] })) void sendMessage();
    },
    [addToolApprovalResponse, messages, setMessages, sendMessage],
  );

  /** The reply to the agent's question resumes the answer that asked: no new message, the same answer goes on. */
  const answerQuestion = useCallback(
    (interruptId: string, value: string) => void sendMessage(undefined, { body: { resume: { interruptId, value } } }),
    [sendMessage],
  );

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
      const files = question?.parts.filter((part): part is FileUIPart => part.type === 'file') ?? [];
      setMessages(messages.slice(0, index));
      if (text || files.length) send(text, extra, files); // exactly the message that was refused, files too
    } else {
      beforeRetry.current = messages;
      void regenerate();
    }
  };
  const refused = error instanceof ApiError && error.status < 500; // the question never reached the model

  const shownProfileId = profileId ?? answeredBy ?? profiles.find((profile) => profile.default)?.id ?? '';
  const shownProfile = profiles.find((profile) => profile.id === shownProfileId);

  return (
    <section className="chat" aria-label="Conversation">
      {messages.length > 0 && <h1 className="visually-hidden">{title || 'Conversation'}</h1>}
      <ChatHeader
        conversationId={id}
        started={messages.length > 0 && !busy}
        profiles={profiles}
        profileId={shownProfileId}
        onPickProfile={setProfileId}
        agents={agents}
        agentId={props.agentId ?? pickedAgent ?? agents[0]?.id ?? ''}
        onPickAgent={messages.length === 0 ? setPickedAgent : undefined}
      />
      <div className="messages" role="log" aria-live="polite" aria-busy={busy} ref={logRef} onScroll={onScroll}>
        {messages.length === 0 && !busy ? (
          <Welcome starters={shownProfile?.starters ?? []} onSend={send} />
        ) : (
          <Messages
            messages={messages}
            profiles={profiles}
            progress={progress}
            stopped={stopped}
            busy={busy}
            failed={Boolean(error)}
            refused={refused}
            onApproval={busy ? undefined : answerApproval}
            onAnswer={busy ? undefined : answerQuestion}
            onPending={onPending}
            onVoted={onVoted}
            onEdit={busy || acting ? undefined : edit}
            onRegenerate={busy || acting || lastComparison ? undefined : regenerateAnswer}
            onShowVersion={busy || acting ? undefined : showVersionOf}
          />
        )}
        {!busy && !acting && last?.role === 'assistant' && !lastComparison && suggested && (
          <Suggestions
            suggestions={suggested}
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
      {!atBottom && (
        <button
          type="button"
          className="to-bottom"
          aria-label="Scroll to the newest message"
          data-testid="scroll-to-bottom"
          onClick={() => endRef.current?.scrollIntoView({ block: 'end', behavior: 'smooth' })}
        >
          ↓
        </button>
      )}
      {unsentBack && messages.length === initialMessages.length && !warning && (
        <div className="notice" role="status" data-testid="notice">
          Your last message was not sent: it is back in the message box.
        </div>
      )}
      {warning && (
        <div className="notice" role="status" data-testid="notice">
          {warning}
        </div>
      )}
      {questionWaits && !error && (
        <div className="notice" role="status" data-testid="question-waits">
          The agent waits for your reply to its question above; a message sent here skips the question.
        </div>
      )}
      {error && <ErrorBanner error={error} waitLeft={waitLeft} onRetry={retry} />}
      <Composer
        conversationId={id}
        busy={busy || acting}
        locked={hold ?? (waitingForVote ? 'Vote above to go on' : undefined)}
        onSend={(text, files) => send(text, undefined, files)}
        onStop={stopAnswer}
      />
    </section>
  );
}
