// Retry after a failed answer: a question the server refused (a rate limit, busy, invalid) is sent again exactly
// as it was, files too; an answer that failed is written again, keeping the partial answer while the server
// cannot even be reached. A rate limit is counted down first.
import type { FileUIPart } from 'ai';
import { useEffect, useRef, useState } from 'react';
import { ApiError, type ChatMessage } from '../lib/api';
import { useCountdown } from './useCountdown';

type Chat = {
  messages: ChatMessage[];
  error: Error | undefined;
  setMessages: (messages: ChatMessage[]) => void;
  clearError: () => void;
  regenerate: () => unknown;
};
type Send = (text: string, extra?: Record<string, string>, files?: FileUIPart[]) => void;

// When the visitor's rate limit lets a message through again, kept for the tab: a reload still counts it down.
const RETRY_AT = 'threadline:retry-at';

function savedRetryAt(): number | null {
  const saved = Number(sessionStorage.getItem(RETRY_AT));
  return saved > Date.now() ? saved : null;
}

export function useRetry(chat: Chat, send: Send) {
  const { messages, error, setMessages, clearError, regenerate } = chat;
  const [retryAt, setRetryAt] = useState<number | null>(savedRetryAt); // when a rate limit lets a message through
  // The messages as they were before a Retry that writes the answer again: put back if it cannot even start.
  const beforeRetry = useRef<ChatMessage[] | null>(null);

  // A Retry that could not reach the server (it is still down) keeps the partial answer it would replace.
  useEffect(() => {
    const snapshot = beforeRetry.current;
    if (!error || !snapshot) return;
    beforeRetry.current = null;
    const last = messages.at(-1);
    if (last?.role !== 'assistant' || last.parts.length === 0) setMessages(snapshot);
  }, [error, messages, setMessages]);

  const refused = error instanceof ApiError && error.status < 500; // the question never reached the model

  const retry = (extra?: Record<string, string>) => {
    clearError();
    if (refused) {
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

  return {
    retry,
    refused,
    waitLeft: useCountdown(retryAt), // also after a reload, when no refusal is on the page any more
    /** For useChat's onFinish: an answer that ended well needs nothing put back. */
    finished: (isError: boolean) => {
      if (!isError) beforeRetry.current = null; // a failed one leaves the restoring to the effect above
    },
    /** For useChat's onError: a rate limit says when to try again. */
    failed: (failure: Error) => {
      const limited = failure instanceof ApiError && failure.status === 429;
      const at = limited ? Date.now() + (failure.retryAfter ?? 60) * 1000 : null;
      setRetryAt(at);
      if (at) sessionStorage.setItem(RETRY_AT, String(at));
      else sessionStorage.removeItem(RETRY_AT);
    },
  };
}
