// useChat on /api/chat for one conversation: an answer still being written is picked up after a reload,
// approvals go back once every call that waits has one, and the answer's transient parts (statuses, notes,
// a generated title, tools' progress) go where the page shows them.
import { useChat } from '@ai-sdk/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { useMemo, useRef, useState } from 'react';
import type { ChatMessage, ToolProgress } from '../lib/api';
import { forgetOutgoing } from '../lib/drafts';
import { chatTransport } from '../lib/messages';

/** What the hooks built on this chat do when an answer ends: set by the component after each render, since
 * they need the helpers useChat returns and useChat's callbacks come first. */
export type Ended = { answered: () => void; finished: (isError: boolean) => void; failed: (failure: Error) => void };

type Page = { onTitle: (title: string) => void; onAnswered: () => void; onWarning: (text: string) => void };

export function useConversationChat(id: string, initialMessages: ChatMessage[], page: Page) {
  const [statusText, setStatusText] = useState<string | null>(null);
  const [progress, setProgress] = useState<Record<string, ToolProgress>>({});
  const transport = useMemo(() => chatTransport(), []);
  const ended = useRef<Ended | null>(null);

  const chat = useChat<ChatMessage>({
    id,
    messages: initialMessages,
    transport,
    // An answer still being written (a reload, another tab) is picked up from GET /api/chat/{id}/stream.
    resume: initialMessages.length > 0,
    // Once every call that waits has an answer, the responses go back and the server resumes the answer.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onData: (part) => {
      if (part.type === 'data-status') setStatusText(part.data.text);
      if (part.type === 'data-warning') page.onWarning(part.data.message);
      if (part.type === 'data-title') page.onTitle(part.data.title);
      if (part.type === 'data-tool-progress') {
        const report: ToolProgress = part.data;
        setProgress((current) => ({ ...current, [report.toolCallId]: report }));
      }
    },
    onFinish: ({ isError }) => {
      ended.current?.finished(isError);
      if (!isError) forgetOutgoing(id);
      setStatusText(null);
      ended.current?.answered();
      page.onAnswered();
    },
    onError: (failure) => {
      ended.current?.failed(failure);
      setStatusText(null);
      page.onAnswered();
    },
  });
  return { chat, statusText, progress, endedRef: ended };
}
