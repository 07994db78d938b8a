// One message: text as Markdown (raw HTML is never rendered), reasoning, and tool calls as cards.
import Markdown, { type Components } from 'react-markdown';
import type { ChatMessage } from './api';
import { Rating } from './Rating';

export type ToolProgress = { toolCallId: string; progress: number; total?: number; message?: string };

type Part = ChatMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

// An image in an answer is shown as a link, never loaded: a prompt-injected answer could otherwise send
// the conversation to any host in an image URL the browser fetches by itself.
const markdownComponents: Components = {
  a: ({ children, href }) => (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  ),
  img: ({ src, alt }) => (
    <a className="image-link" href={typeof src === 'string' ? src : undefined} target="_blank" rel="noopener noreferrer">
      {`Image: ${alt || src}`}
    </a>
  ),
};

function time(iso?: string) {
  if (!iso) return null;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return null;
  return (
    <time dateTime={iso} title={date.toLocaleString()}>
      {date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}
    </time>
  );
}

function show(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function ToolCard({ part, progress }: { part: ToolPart; progress?: ToolProgress }) {
  const name = part.type.replace(/^tool-/, '');
  const state =
    part.state === 'output-available' ? 'done' : part.state === 'output-error' ? 'failed' : 'running';
  const label = { running: 'Running…', done: 'Done', failed: 'Failed' }[state];
  return (
    <details className={`tool tool-${state}`} data-testid="tool-card">
      <summary>
        <span className="tool-icon" aria-hidden="true">
          ⚙
        </span>
        <span className="tool-name" data-testid="tool-name">
          {name}
        </span>
        <span className="tool-state" data-testid="tool-state">
          {label}
        </span>
        {state === 'running' && progress && (
          <span className="tool-progress" data-testid="tool-progress">
            {progress.message ?? ''}{' '}
            {progress.total ? `${Math.round((progress.progress / progress.total) * 100)}%` : progress.progress}
          </span>
        )}
      </summary>
      <div className="tool-body">
        <div className="tool-label">Arguments</div>
        <pre>{show(part.input)}</pre>
        {state === 'done' && (
          <>
            <div className="tool-label">Result</div>
            <pre>{show('output' in part ? part.output : undefined)}</pre>
          </>
        )}
        {state === 'failed' && (
          <>
            <div className="tool-label">Error</div>
            <pre>{'errorText' in part ? part.errorText : ''}</pre>
          </>
        )}
      </div>
    </details>
  );
}

type Props = {
  message: ChatMessage;
  progress: Record<string, ToolProgress>;
  stopped: boolean;
  failed: boolean;
  streaming: boolean;
  modelLabel?: string; // shown when there is more than one model to tell apart
  rateable?: boolean; // false for an A/B answer not yet voted on
};

export function Message({ message, progress, stopped, failed, streaming, modelLabel, rateable = true }: Props) {
  const mine = message.role === 'user';
  const reason = message.metadata?.interrupted;
  const interruption = stopped || reason === 'cancelled' || reason === 'client-disconnected' ? 'stopped'
    : reason || failed ? 'interrupted' : null;
  return (
    <article
      className={`message ${mine ? 'user' : 'assistant'}`}
      aria-label={mine ? 'You' : 'Assistant'}
      data-testid={mine ? 'user-message' : 'assistant-message'}
    >
      <div className="bubble" data-testid="bubble">
        {message.parts.map((part, index) => {
          if (part.type === 'text') {
            return mine ? (
              <p key={index} className="plain">
                {part.text}
              </p>
            ) : (
              <div key={index} className="markdown" data-testid="answer-text">
                <Markdown components={markdownComponents}>{part.text}</Markdown>
              </div>
            );
          }
          if (part.type === 'reasoning') {
            // Open while the model thinks, collapsed once its answer starts (a click opens it again).
            const answering = message.parts.some((other) => other.type === 'text');
            return (
              <details
                key={index}
                className="reasoning"
                data-testid="reasoning"
                open={streaming && !answering ? true : undefined}
              >
                <summary>Thinking</summary>
                <p>{part.text}</p>
              </details>
            );
          }
          if ('toolCallId' in part) {
            return <ToolCard key={part.toolCallId} part={part as ToolPart} progress={progress[part.toolCallId]} />;
          }
          return null;
        })}
      </div>
      <div className="meta" data-testid="message-meta">
        {mine ? 'You' : 'Assistant'}
        {!mine && modelLabel && <span data-testid="answer-model"> · {modelLabel}</span>} ·{' '}
        {time(message.metadata?.createdAt) ?? (streaming ? 'now' : '')}
        {interruption && !streaming && <span className="stopped"> · {interruption}</span>}
      </div>
      {!mine && rateable && !streaming && message.parts.length > 0 && (
        <Rating key={message.id} messageId={message.id} initial={message.metadata?.feedback} />
      )}
    </article>
  );
}
