// What an answer waits for from the person: approvals of its tool calls (the AI SDK's, with threadline's
// changed input), the agent's question, and an A/B comparison's vote.
import { lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { useCallback, useState } from 'react';
import { type ChatMessage, loadConversation } from '../lib/api';
import { withEditedInput } from '../lib/messages';

type Chat = {
  messages: ChatMessage[];
  setMessages: (messages: ChatMessage[]) => void;
  sendMessage: (message?: undefined, options?: { body: object }) => unknown;
  addToolApprovalResponse: (response: { id: string; approved: boolean; reason?: string }) => unknown;
};

export function useWaitingAnswers(id: string, chat: Chat, onAnswered: () => void) {
  const { messages, setMessages, sendMessage, addToolApprovalResponse } = chat;
  const [unvoted, setUnvoted] = useState<Record<string, boolean>>({}); // A/B comparisons by id

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

  const waitsForVote = (comparisonId: string | undefined) => Boolean(comparisonId && unvoted[comparisonId] !== false);
  return { answerApproval, answerQuestion, onPending, onVoted, waitsForVote };
}
