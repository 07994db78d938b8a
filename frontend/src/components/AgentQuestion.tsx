// What the agent asks the person (its `interrupt(value)`, a `data-interrupt` part), with a reply box: the reply
// resumes the answer that asked. A question with `options` offers them as buttons too.
import { useState } from 'react';
import type { AgentQuestion as Question } from '../lib/api';

export type Answer = (interruptId: string, value: string) => void;

function questionText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && 'question' in value && typeof value.question === 'string') {
    return value.question;
  }
  return JSON.stringify(value);
}

function optionsOf(value: unknown): string[] {
  if (value && typeof value === 'object' && 'options' in value && Array.isArray(value.options)) {
    return value.options.filter((option): option is string => typeof option === 'string');
  }
  return [];
}

export function AgentQuestion({ question, onAnswer }: { question: Question; onAnswer?: Answer }) {
  const [reply, setReply] = useState('');
  // What the person chose, shown in the card: as they chose it, or as the history kept it.
  const [replied, setReplied] = useState<string | null>(
    question.reply === undefined ? null : typeof question.reply === 'string' ? question.reply : JSON.stringify(question.reply),
  );
  const answer = (value: string) => {
    setReplied(value);
    onAnswer?.(question.id, value);
  };
  return (
    <div className="agent-question" role="group" aria-label="The agent asks" data-testid="agent-question">
      <div className="tool-label">The agent asks</div>
      <p>{questionText(question.value)}</p>
      {replied !== null && !onAnswer && (
        <p className="muted small" data-testid="agent-replied">
          You replied: {replied}
        </p>
      )}
      {onAnswer && (
        <form
          className="approval"
          onSubmit={(event) => {
            event.preventDefault();
            if (reply.trim()) answer(reply.trim());
          }}
        >
          {optionsOf(question.value).map((option) => (
            <button key={option} type="button" className="secondary" onClick={() => answer(option)}>
              {option}
            </button>
          ))}
          <input
            aria-label="Your reply"
            data-testid="agent-reply"
            value={reply}
            maxLength={2000}
            placeholder="Your reply"
            onChange={(event) => setReply(event.target.value)}
          />
          <button type="submit" className="approve" disabled={!reply.trim()}>
            Reply
          </button>
        </form>
      )}
    </div>
  );
}

/** Another data part the agent sent (`get_stream_writer()`): a line saying what it reports. */
export function AgentNote({ name, data }: { name: string; data: unknown }) {
  let text = JSON.stringify(data);
  if (data && typeof data === 'object') {
    const fields = data as Record<string, unknown>;
    const said = [fields.message, fields.text, fields.source].find((field) => typeof field === 'string');
    const count = typeof fields.done === 'number' && typeof fields.of === 'number' ? `${fields.done}/${fields.of}` : '';
    if (said || count) text = [count, said].filter(Boolean).join(' · ');
  }
  return (
    <div className="agent-note" data-testid={`agent-data-${name}`}>
      <span className="tool-label">{name}</span> {text}
    </div>
  );
}

/** A `response_format` agent's typed answer (`data-structured-response`): its fields, by name. */
export function StructuredAnswer({ data }: { data: unknown }) {
  const fields = data && typeof data === 'object' && !Array.isArray(data) ? Object.entries(data) : null;
  return (
    <div className="agent-note structured" data-testid="structured-response">
      <span className="tool-label">Structured answer</span>
      {fields ? (
        <dl>
          {fields.map(([name, value]) => (
            <div key={name}>
              <dt>{name.replaceAll('_', ' ')}</dt>
              <dd dir="auto">{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <span> {JSON.stringify(data)}</span>
      )}
    </div>
  );
}
