// One conversation: useChat on /api/chat, sending only the new message (the server keeps the history); what
// it does besides sending lives in hooks (following the bottom, versions, retry, what waits, server actions).
import type { FileUIPart } from 'ai';
import { useCallback, useEffect, useState } from 'react';
import { useConversationChat } from '../hooks/useConversationChat';
import { useFollowBottom } from '../hooks/useFollowBottom';
import { useRetry } from '../hooks/useRetry';
import { useServerAction } from '../hooks/useServerAction';
import { useVersions } from '../hooks/useVersions';
import { useWaitingAnswers } from '../hooks/useWaitingAnswers';
import { type Agent, type ChatMessage, type Profile, stopAnswers } from '../lib/api';
import { rememberOutgoing, restoreOutgoing } from '../lib/drafts';
import { answerState, textOf, withWaitingDeclined } from '../lib/messages';
import { ChatHeader } from './ChatHeader';
import { ChatNotices } from './ChatNotices';
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
  const [warning, setWarning] = useState<string | null>(null);
  const [stopped, setStopped] = useState<Set<string>>(new Set());
  // A message the server never took before the page went away is back in the box: say so once.
  const [unsentBack] = useState(() =>
    restoreOutgoing(
      id,
      initialMessages.filter((message) => message.role === 'user').map((message) => textOf(message)),
    ),
  );
  const { chat, statusText, progress, endedRef } = useConversationChat(id, initialMessages, {
    onTitle,
    onAnswered,
    onWarning: setWarning,
  });
  const { messages, sendMessage, setMessages, stop, status, error } = chat;

  const busy = status === 'submitted' || status === 'streaming';
  const { answer: last, comparison: lastComparison, thinking, suggested, questionWaits, approvalWaits, answeredBy } =
    answerState(messages, busy);
  const { logRef, endRef, onScroll, follow, atBottom, toEnd } = useFollowBottom(messages, thinking);
  const startAnswer = useCallback(() => {
    follow();
    setWarning(null);
  }, [follow]);
  const { edit, regenerateAnswer, showVersionOf, answered } = useVersions(id, chat, startAnswer, setWarning);
  const waiting = useWaitingAnswers(id, chat, onAnswered);

  /** A new message declines the tool calls that wait for approval (the server does so): the card says why. */
  const declineWaiting = () => {
    const answer = messages.at(-1);
    const declined = answer?.role === 'assistant' ? withWaitingDeclined(answer) : null;
    if (declined) setMessages([...messages.slice(0, -1), declined]);
  };

  const send = (text: string, extra?: Record<string, string>, files?: FileUIPart[]) => {
    if (hold) return; // the chips and suggested replies wait too
    if (messages.length === 0) onFirstMessage(text || files?.[0]?.filename || '');
    startAnswer(); // one's own message is always followed
    declineWaiting();
    const agent = messages.length === 0 && pickedAgent ? { agent: pickedAgent } : {}; // later ones keep it
    const body = { ...(profileId ? { profileId } : {}), ...agent, ...extra };
    const metadata = { createdAt: new Date().toISOString() };
    const message = !files?.length ? { text, metadata } : text ? { text, files, metadata } : { files, metadata };
    const sentBefore = messages.filter((message) => message.role === 'user').length;
    rememberOutgoing(id, { text, files: files ?? [] }, sentBefore); // until the server has taken it
    void sendMessage(message, { body });
  };
  const { retry, refused, waitLeft, finished, failed } = useRetry(chat, send);
  const { act, acting } = useServerAction(id, chat, { onNewChat, onAnswered, onWarning: setWarning });
  useEffect(() => {
    endedRef.current = { answered, finished, failed };
  });

  const stopAnswer = () => {
    const answer = messages.at(-1);
    if (answer?.role === 'assistant') setStopped((current) => new Set(current).add(answer.id));
    // The server stops the answer itself: closing the stream alone does not when it runs on after a
    // disconnect (CHAT_ON_DISCONNECT=continue), and answer B of a comparison streams on a request of its own.
    void stopAnswers(id);
    void stop();
  };

  const shownProfileId = profileId ?? answeredBy ?? profiles.find((profile) => profile.default)?.id ?? '';
  const shownProfile = profiles.find((profile) => profile.id === shownProfileId);
  const shownAgentId = props.agentId ?? pickedAgent ?? agents[0]?.id ?? '';
  // An agent's own prompts (its langgraph.json's `starters`) before the model profile's
  const agentStarters = agents.find((agent) => agent.id === shownAgentId)?.starters ?? [];

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
        agentId={shownAgentId}
        onPickAgent={messages.length === 0 ? setPickedAgent : undefined}
      />
      <div className="messages" role="log" aria-live="polite" aria-busy={busy} ref={logRef} onScroll={onScroll}>
        {messages.length === 0 && !busy ? (
          <Welcome starters={agentStarters.length ? agentStarters : (shownProfile?.starters ?? [])} onSend={send} />
        ) : (
          <Messages
            messages={messages}
            profiles={profiles}
            progress={progress}
            stopped={stopped}
            busy={busy}
            failed={Boolean(error)}
            refused={refused}
            onApproval={busy ? undefined : waiting.answerApproval}
            onAnswer={busy ? undefined : waiting.answerQuestion}
            onPending={waiting.onPending}
            onVoted={waiting.onVoted}
            onEdit={busy || acting ? undefined : edit}
            onRegenerate={
              busy || acting || lastComparison || questionWaits || approvalWaits ? undefined : regenerateAnswer
            }
            onShowVersion={busy || acting ? undefined : showVersionOf}
          />
        )}
        {!busy && !acting && last && !lastComparison && suggested && (
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
          onClick={toEnd}
        >
          ↓
        </button>
      )}
      <ChatNotices
        unsentBack={unsentBack && messages.length === initialMessages.length}
        warning={warning}
        questionWaits={questionWaits && !error}
        approvalWaits={approvalWaits && !error}
        waitLeft={error ? 0 : waitLeft}
      />
      {error && <ErrorBanner error={error} waitLeft={waitLeft} onRetry={retry} />}
      <Composer
        conversationId={id}
        busy={busy || acting}
        locked={
          hold ??
          (waiting.waitsForVote(lastComparison)
            ? 'Vote above to go on'
            : !error && waitLeft > 0 // a rate limit met before a reload: the banner with Retry went with it
              ? 'Too many requests: wait a moment'
              : undefined)
        }
        onSend={(text, files) => send(text, undefined, files)}
        onStop={stopAnswer}
      />
    </section>
  );
}
