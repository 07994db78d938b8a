// An A/B comparison: two answers to one message side by side, unnamed until the person votes; after the
// vote the chosen one stays in the conversation, with a note naming both models.
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { useEffect, useMemo, useRef, useState } from 'react';
import {
  type ChatMessage,
  type ComparisonRecord,
  type Preference,
  type Profile,
  chatFetch,
  describeError,
  getComparison,
  voteComparison,
} from '../lib/api';
import type { ToolProgress } from '../lib/api';
import { Message } from './Message';

type Props = {
  comparisonId: string;
  answer: ChatMessage; // the answer the conversation holds: A until a vote picks B
  streaming: boolean;
  profiles: Profile[];
  progress: Record<string, ToolProgress>;
  onPending: (comparisonId: string, pending: boolean) => void;
  onVoted: () => void; // load the conversation again: the chosen answer is its continuation now
};

const RECORD_RETRY_MS = 300; // the record gets an answer's text just after its stream ends

function labelOf(profileId: string, profiles: Profile[]): string {
  return profiles.find((profile) => profile.id === profileId)?.label ?? profileId;
}

function Thinking() {
  return (
    <div className="thinking" role="status">
      <span className="dots" aria-hidden="true" />
      Thinking…
    </div>
  );
}

function showsSomething(message: ChatMessage): boolean {
  return message.parts.some((part) => part.type === 'text' || part.type.startsWith('tool-'));
}

function written(text: string, id: string): ChatMessage {
  return { id, role: 'assistant', parts: [{ type: 'text', text, state: 'done' }] };
}

/** Answer B: a second useChat resuming the comparison's stream; once it is gone, the record's text. */
function SecondAnswer({ comparisonId, text, onEnded }: { comparisonId: string; text?: string | null; onEnded: () => void }) {
  const transport = useMemo(
    () =>
      new DefaultChatTransport<ChatMessage>({
        api: '/api/chat',
        fetch: chatFetch,
        prepareReconnectToStreamRequest: () => ({
          api: `/api/comparisons/${encodeURIComponent(comparisonId)}/stream`,
        }),
      }),
    [comparisonId],
  );
  const { messages, status, resumeStream } = useChat<ChatMessage>({ id: `ab-${comparisonId}`, transport });
  const resumed = useRef(false);
  useEffect(() => {
    if (resumed.current) return;
    resumed.current = true;
    void resumeStream().finally(onEnded); // 204 (nothing live here) resolves at once
  }, [resumeStream, onEnded]);
  const live = messages.find((message) => message.role === 'assistant');
  const streaming = status === 'submitted' || status === 'streaming';
  const shown = live && showsSomething(live) ? live : text != null ? written(text, `${comparisonId}-b`) : null;
  if (!shown) return <Thinking />;
  return <Message message={shown} progress={{}} stopped={false} failed={false} streaming={streaming} rateable={false} />;
}

export function Comparison({ comparisonId, answer, streaming, profiles, progress, onPending, onVoted }: Props) {
  const [record, setRecord] = useState<ComparisonRecord | null>(null);
  const [secondEnded, setSecondEnded] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [voting, setVoting] = useState(false);
  const onSecondEnded = useMemo(() => () => setSecondEnded(true), []);

  // The record, read again once the answers have ended on the page until it has both texts.
  useEffect(() => {
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const next = await getComparison(comparisonId);
        if (cancelled) return;
        setRecord(next);
        const unfinished = next.a.text == null || next.b.text == null;
        if (unfinished && !streaming && secondEnded) timer = setTimeout(load, RECORD_RETRY_MS);
      } catch (caught) {
        if (!cancelled) setError(describeError(caught as Error));
      }
    };
    void load();
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [comparisonId, streaming, secondEnded]);

  const pending = record?.preference == null;
  useEffect(() => onPending(comparisonId, pending), [comparisonId, pending, onPending]);

  const vote = async (preference: Preference) => {
    setVoting(true);
    setError(null);
    try {
      await voteComparison(comparisonId, preference);
      setRecord(await getComparison(comparisonId));
      onVoted();
    } catch (caught) {
      setError(describeError(caught as Error));
    } finally {
      setVoting(false);
    }
  };

  if (record && !pending) {
    const [a, b] = [labelOf(record.a.profile, profiles), labelOf(record.b.profile, profiles)];
    const note =
      record.preference === 'tie'
        ? `A tie between Response A (${a}) and Response B (${b}); the conversation goes on with A.`
        : record.preference === 'A'
          ? `You preferred Response A (${a}) over Response B (${b}).`
          : `You preferred Response B (${b}) over Response A (${a}).`;
    const chosen = record.preference === 'B' ? b : a;
    return (
      <>
        <Message message={answer} progress={progress} stopped={false} failed={false} streaming={false} modelLabel={chosen} />
        <p className="comparison-note" data-testid="comparison-result">
          {note}
        </p>
      </>
    );
  }

  const ready = record != null && record.a.text != null && record.b.text != null;
  return (
    <section className="comparison" aria-label="Two answers to compare" data-testid="comparison">
      <div className="comparison-answers">
        <div className="comparison-side" data-testid="response-a">
          <h2>Response A</h2>
          {streaming && !showsSomething(answer) ? (
            <Thinking />
          ) : (
            <Message message={answer} progress={progress} stopped={false} failed={false} streaming={streaming} rateable={false} />
          )}
        </div>
        <div className="comparison-side" data-testid="response-b">
          <h2>Response B</h2>
          <SecondAnswer comparisonId={comparisonId} text={record?.b.text} onEnded={onSecondEnded} />
        </div>
      </div>
      <div className="comparison-vote" role="group" aria-label="Which answer is better?">
        <span>{ready ? 'Which answer is better?' : 'Both answers are being written…'}</span>
        <button type="button" data-testid="vote-A" disabled={!ready || voting} onClick={() => void vote('A')}>
          A is better
        </button>
        <button type="button" data-testid="vote-tie" disabled={!ready || voting} onClick={() => void vote('tie')}>
          It's a tie
        </button>
        <button type="button" data-testid="vote-B" disabled={!ready || voting} onClick={() => void vote('B')}>
          B is better
        </button>
      </div>
      {error && (
        <p className="comparison-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
