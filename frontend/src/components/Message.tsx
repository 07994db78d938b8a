// One message: text as Markdown (raw HTML is never rendered), reasoning, and tool calls as cards.
import { Fragment, lazy, memo, Suspense, useState } from 'react';
import type { ChatMessage, ToolProgress } from '../lib/api';
import { AgentNote, AgentQuestion, type Answer, StructuredAnswer } from './AgentQuestion';
import { FileView } from './Attachments';
import { Rating } from './Rating';
import { Reasoning } from './Reasoning';
import { CopyButton } from './CopyButton';
import { EditBox, VersionSwitcher } from './Versions';
import { handoffTarget, isHandoffWords, textOf } from '../lib/messages';

type Part = ChatMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

// Markdown with its highlighter is most of the page's code: it loads beside the first answer, not before the page.
const MarkdownText = lazy(() => import('./Markdown').then((module) => ({ default: module.MarkdownText })));

/** Rendered out of sight once there are conversations to open: the Markdown renderer then loads beside the
 * conversation, and an opened one never shows its raw Markdown first. */
export function MarkdownPreload() {
  return (
    <Suspense fallback={null}>
      <div hidden>
        <MarkdownText text="" streaming={false} />
      </div>
    </Suspense>
  );
}

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

/** A JSON object typed by the person, or undefined while it is not one. */
function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function show(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

export type Approve = (approvalId: string, approved: boolean, reason?: string, editedInput?: unknown) => void;

type ApprovalProps = {
  approvalId: string;
  input: unknown;
  editable: boolean;
  onApproval: Approve;
  because?: string; // why it waits, where the agent says (HumanInTheLoopMiddleware's description)
};

/** Approve or deny a call that waits for the person, with an optional reason for a denial; where the agent
 * allows it, the input may be changed first (JSON), and the changed call runs instead. */
function ApprovalButtons({ approvalId, input, editable, onApproval, because }: ApprovalProps) {
  const [reason, setReason] = useState('');
  const [edited, setEdited] = useState<string | null>(null);
  const parsed = edited === null ? undefined : parseObject(edited);
  return (
    <div className="approval" role="group" aria-label="This tool call waits for your approval">
      {because && (
        <p className="approval-reason" data-testid="approval-reason">
          {because}
        </p>
      )}
      <p>This call waits for your approval before it runs. Run it?</p>
      {edited !== null && (
        <textarea
          aria-label="The tool's input (JSON)"
          data-testid="edited-input"
          rows={4}
          value={edited}
          aria-invalid={parsed === undefined}
          onChange={(event) => setEdited(event.target.value)}
        />
      )}
      {editable && edited === null && (
        <button type="button" data-testid="edit-input" onClick={() => setEdited(JSON.stringify(input, null, 2))}>
          Edit input
        </button>
      )}
      {edited !== null && (
        <button
          type="button"
          className="approve"
          data-testid="approve-edited"
          disabled={parsed === undefined}
          onClick={() => onApproval(approvalId, true, undefined, parsed)}
        >
          Run with this input
        </button>
      )}
      <input
        type="text"
        aria-label="Reason (optional, sent with a denial)"
        placeholder="Reason (optional)"
        maxLength={2000}
        value={reason}
        onChange={(event) => setReason(event.target.value)}
      />
      <button type="button" className="approve" data-testid="approve" onClick={() => onApproval(approvalId, true)}>
        Approve
      </button>
      <button
        type="button"
        className="deny"
        data-testid="deny"
        onClick={() => onApproval(approvalId, false, reason.trim() || undefined)}
      >
        Deny
      </button>
    </div>
  );
}

const STATES: Record<string, [string, string]> = {
  'output-available': ['done', 'Done'],
  'output-error': ['failed', 'Failed'],
  'output-denied': ['denied', 'Declined'],
  'approval-requested': ['waiting', 'Needs your approval'],
  'approval-responded': ['running', 'Approved'],
};

type ToolCardProps = {
  part: ToolPart;
  progress?: ToolProgress;
  editable: boolean;
  because?: string; // why it waits for approval, where the agent says
  onApproval?: Approve;
};

function ToolCard({ part, progress, editable, because, onApproval }: ToolCardProps) {
  const name = part.type.replace(/^tool-/, '');
  const [state, label] = STATES[part.state] ?? ['running', 'Running…'];
  const approval = 'approval' in part ? part.approval : undefined;
  const waiting = part.state === 'approval-requested' && approval && onApproval;
  return (
    <details className={`tool tool-${state}`} data-testid="tool-card" open={waiting ? true : undefined}>
      <summary>
        {state === 'running' ? (
          <span className="spinner" aria-hidden="true" data-testid="tool-spinner" />
        ) : (
          <span className="tool-icon" aria-hidden="true">
            ⚙
          </span>
        )}
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
        {state === 'denied' && approval?.reason && <div className="tool-label">Declined: {approval.reason}</div>}
        {waiting && (
          <ApprovalButtons
            approvalId={approval.id}
            input={part.input}
            editable={editable}
            onApproval={onApproval}
            because={because}
          />
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
  notSent?: boolean; // a question the server refused before taking it
  streaming: boolean;
  modelLabel?: string; // shown when there is more than one model to tell apart
  rateable?: boolean; // false for an A/B answer not yet voted on
  onApproval?: Approve; // answers a tool call that waits for the person's approval
  onAnswer?: Answer; // answers the agent's question
  onEdit?: (message: ChatMessage, text: string) => void; // sends the message again with new text
  onRegenerate?: (message: ChatMessage) => void; // writes this answer again
  onShowVersion?: (message: ChatMessage, version: number) => void; // another version of an edit or answer
};

/** Data parts shown elsewhere (suggestions under the answer) or not at all (statuses while it streams). */
const COLLAPSED_LINES = 12; // a longer message of one's own (a paste) shows its start, and Show more
const COLLAPSED_CHARS = 1_200;

/** One's own text, in its own direction (`dir="auto"`), collapsed when it is long. */
function LongText({ text }: { text: string }) {
  const long = text.split('\n').length > COLLAPSED_LINES || text.length > COLLAPSED_CHARS;
  const [open, setOpen] = useState(false);
  return (
    <>
      <p className={long && !open ? 'plain collapsed' : 'plain'} dir="auto">
        {text}
      </p>
      {long && (
        <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Show less' : 'Show more'}
        </button>
      )}
    </>
  );
}

const QUIET_PARTS = new Set([
  'data-suggestions',
  'data-status',
  'data-warning',
  'data-tool-progress',
  'data-approval',
]);

/** Memoized: a token of the answer being written re-renders that answer, not the conversation before it. */
export const Message = memo(function Message({
  message,
  progress,
  stopped,
  failed,
  notSent = false,
  streaming,
  modelLabel,
  rateable = true,
  onApproval,
  onAnswer,
  onEdit,
  onRegenerate,
  onShowVersion,
}: Props) {
  const [editing, setEditing] = useState(false);
  const mine = message.role === 'user';
  const reason = message.metadata?.interrupted;
  // What the agent says of a call that waits: the decisions it allows, and why it asks (threadline's extension).
  const approvals = new Map(
    message.parts.flatMap((part) => (part.type === 'data-approval' ? [[part.data.toolCallId, part.data]] : [])),
  );
  const waitingForPerson =
    message.parts.some((part) => 'state' in part && part.state === 'approval-requested') ||
    message.parts.at(-1)?.type === 'data-interrupt'; // an approval, or the agent's question
  const interruption = stopped || reason === 'cancelled' || reason === 'client-disconnected' ? 'stopped'
    : reason || failed ? 'interrupted' : null;
  const renderPart = (part: Part, index: number) => {
    if (isHandoffWords(message.parts, index)) return null; // its handoff's line says it
    if (part.type === 'text') {
      return mine ? (
        <LongText key={index} text={part.text} />
      ) : (
        <div key={index} className="markdown" data-testid="answer-text" dir="auto">
          <Suspense fallback={<p className="plain">{part.text}</p>}>
            <MarkdownText text={part.text} streaming={streaming} />
          </Suspense>
        </div>
      );
    }
    if (part.type === 'file') return <FileView key={index} part={part} />;
    if (part.type === 'source-url') {
      return (
        <a key={index} className="source-link" href={part.url} target="_blank" rel="noopener noreferrer nofollow" data-testid="source">
          {part.title ?? part.url}
        </a>
      );
    }
    if (part.type === 'reasoning') {
      const answering = message.parts.some((other) => other.type === 'text' || 'toolCallId' in other);
      return <Reasoning key={index} text={part.text} thinking={streaming && !answering} />;
    }
    if (part.type === 'data-interrupt') {
      const open = onAnswer && message.parts.slice(index + 1).every((later) => later.type === 'step-start');
      return (
        <AgentQuestion
          key={index}
          question={part.data}
          onAnswer={open ? onAnswer : undefined}
        />
      );
    }
    if (part.type === 'data-structured-response') return <StructuredAnswer key={index} data={part.data} />;
    if (part.type.startsWith('data-') && !QUIET_PARTS.has(part.type)) {
      return <AgentNote key={index} name={part.type.slice(5)} data={'data' in part ? part.data : null} />;
    }
    // A team's handoff: a line saying who takes over, not a tool card.
    const handedTo = 'toolCallId' in part && part.state !== 'approval-requested' ? handoffTarget(part.type) : undefined;
    if (handedTo && 'toolCallId' in part) {
      return (
        <div key={part.toolCallId} className="handoff" data-testid="handoff">
          → {handedTo}
        </div>
      );
    }
    if ('toolCallId' in part) {
      return (
        <ToolCard
          key={part.toolCallId}
          part={part as ToolPart}
          progress={progress[part.toolCallId]}
          editable={approvals.get(part.toolCallId)?.decisions.includes('edit') ?? false}
          because={approvals.get(part.toolCallId)?.reason}
          onApproval={onApproval}
        />
      );
    }
    return null;
  };
  return (
    <article
      className={`message ${mine ? 'user' : 'assistant'}`}
      aria-label={mine ? 'You' : 'Assistant'}
      data-testid={mine ? 'user-message' : 'assistant-message'}
    >
      {editing && onEdit ? (
        <EditBox
          text={textOf(message)}
          onCancel={() => setEditing(false)}
          onSave={(text) => {
            setEditing(false);
            if (text !== textOf(message).trim()) onEdit(message, text); // the same text again is no new version
          }}
        />
      ) : (
      <div className="bubble" data-testid="bubble">
        {message.parts.map((part, index) => {
          const speaker = agentOf(part);
          const element = renderPart(part, index);
          if (!speaker || speaker === agentOf(spokenBefore(message.parts, index))) return element;
          return (
            <Fragment key={`agent-${index}`}>
              <div className="agent-label" data-testid="agent-label">
                {speaker}
              </div>
              {element}
            </Fragment>
          );
        })}
        {streaming && !mine && <span className="dots streaming-dots" aria-hidden="true" data-testid="streaming-dots" />}
      </div>
      )}
      <div className="meta" data-testid="message-meta">
        {mine ? 'You' : 'Assistant'}
        {!mine && modelLabel && <span data-testid="answer-model"> · {modelLabel}</span>} ·{' '}
        {time(message.metadata?.createdAt) ?? (streaming ? 'now' : '')}
        {interruption && !streaming && <span className="stopped"> · {interruption}</span>}
        {mine && notSent && (
          <span className="stopped" data-testid="not-sent">
            {' '}
            · not sent
          </span>
        )}
      </div>
      {!streaming && !editing && (
        <div className="message-actions" data-testid="message-actions">
          {message.metadata?.versions && message.metadata.versions > 1 && (
            <VersionSwitcher
              version={message.metadata.version ?? message.metadata.versions}
              versions={message.metadata.versions}
              onShow={onShowVersion && ((version) => onShowVersion(message, version))}
            />
          )}
          {mine && onEdit && !notSent && (
            <button type="button" className="icon-button" data-testid="edit-message" onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
          {!mine && message.parts.some((part) => part.type === 'text') && <CopyButton text={textOf(message)} />}
          {!mine && onRegenerate && (
            <button
              type="button"
              className="icon-button"
              data-testid="regenerate"
              onClick={() => onRegenerate(message)}
            >
              Regenerate
            </button>
          )}
          {/* Only a whole answer is rated: a stopped or broken one is not what the model would have said. */}
          {!mine && rateable && !interruption && !waitingForPerson && message.parts.length > 0 && (
            <Rating key={message.id} messageId={message.id} initial={message.metadata?.feedback} />
          )}
        </div>
      )}
    </article>
  );
});

/** Which of a team's agents produced a part (`providerMetadata.threadline.agent`, docs/guides/agents.md). */
function agentOf(part: Part | undefined): string | undefined {
  if (!part) return undefined;
  const metadata =
    'providerMetadata' in part ? part.providerMetadata : 'callProviderMetadata' in part ? part.callProviderMetadata : undefined;
  const agent = metadata?.threadline?.agent;
  return typeof agent === 'string' ? agent : undefined;
}

/** The last part before `index` that shows something a named agent may have produced. */
function spokenBefore(parts: ChatMessage['parts'], index: number): Part | undefined {
  return parts.slice(0, index).findLast((part) => part.type === 'text' || part.type === 'reasoning' || 'toolCallId' in part);
}
