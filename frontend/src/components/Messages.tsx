// The conversation's messages: each a memoized Message (or an A/B comparison), so a streaming token
// re-renders only the answer it belongs to.
import { memo } from 'react';
import type { ChatMessage, Profile, ToolProgress } from '../lib/api';
import { Comparison } from './Comparison';
import type { Answer } from './AgentQuestion';
import { type Approve, Message } from './Message';

/** What an answer's meta line names: its profile's label, or the model the server reported. */
function labelOf(message: ChatMessage, profiles: Profile[]): string | undefined {
  const profile = profiles.find((candidate) => candidate.id === message.metadata?.profile);
  return profiles.length > 1 ? (profile?.label ?? message.metadata?.model) : undefined;
}

type Props = {
  messages: ChatMessage[];
  profiles: Profile[];
  progress: Record<string, ToolProgress>;
  stopped: Set<string>;
  busy: boolean;
  failed: boolean; // the last answer ended in an error
  refused: boolean; // the last question never reached the model
  onApproval?: Approve;
  onAnswer?: Answer;
  onPending: (comparisonId: string, pending: boolean) => void;
  onVoted: () => void;
  onEdit?: (message: ChatMessage, text: string) => void;
  onRegenerate?: (message: ChatMessage) => void;
  onShowVersion?: (message: ChatMessage, version: number) => void;
};

export const Messages = memo(function Messages(props: Props) {
  const { messages, profiles, progress, stopped, busy, failed, refused, onApproval, onAnswer, onPending, onVoted } =
    props;
  const { onEdit, onRegenerate, onShowVersion } = props;
  const last = messages.at(-1);
  return messages.map((message) =>
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
        failed={failed && message === last && message.role === 'assistant'}
        notSent={refused && message === last && message.role === 'user'}
        streaming={busy && message === last}
        modelLabel={labelOf(message, profiles)}
        onApproval={onApproval}
        onAnswer={message === last ? onAnswer : undefined}
        onEdit={onEdit}
        onRegenerate={message === last && message.role === 'assistant' && !failed ? onRegenerate : undefined}
        onShowVersion={onShowVersion}
      />
    ),
  );
});
