// Edits and regenerated answers: each keeps what it replaces as a version, so once answered the conversation
// is read again for its version counts; and switching between versions.
import type { FileUIPart } from 'ai';
import { useCallback, useEffect, useRef, useState } from 'react';
import { type ChatMessage, describeError, loadConversation, showVersion } from '../lib/api';

type Chat = {
  sendMessage: (message: { text: string; messageId: string; metadata: object; files?: FileUIPart[] }) => unknown;
  regenerate: (options: { messageId: string }) => unknown;
  setMessages: (messages: ChatMessage[]) => void;
};

export function useVersions(id: string, chat: Chat, onStart: () => void, onWarning: (text: string) => void) {
  const { sendMessage, regenerate, setMessages } = chat;
  const versioned = useRef(false);
  const [recount, setRecount] = useState(0);

  useEffect(() => {
    if (recount > 0) loadConversation(id).then(setMessages, () => undefined);
  }, [recount, id, setMessages]);

  /** An edit: the message is sent again in place (useChat drops what followed); the server keeps the old branch. */
  const edit = useCallback(
    (message: ChatMessage, text: string) => {
      onStart();
      versioned.current = true;
      const files = message.parts.filter((part): part is FileUIPart => part.type === 'file');
      const metadata = { createdAt: new Date().toISOString() };
      void sendMessage({ text, messageId: message.id, metadata, ...(files.length ? { files } : {}) });
    },
    [sendMessage, onStart],
  );

  const regenerateAnswer = useCallback(
    (message: ChatMessage) => {
      onStart();
      versioned.current = true;
      void regenerate({ messageId: message.id });
    },
    [regenerate, onStart],
  );

  const showVersionOf = useCallback(
    (message: ChatMessage, version: number) => {
      showVersion(id, message.id, version).then(setMessages, (failure: Error) => onWarning(describeError(failure)));
    },
    [id, setMessages, onWarning],
  );

  /** An answer ended: one that made a version has the conversation read again. */
  const answered = useCallback(() => {
    if (!versioned.current) return;
    versioned.current = false;
    setRecount((count) => count + 1);
  }, []);

  return { edit, regenerateAnswer, showVersionOf, answered };
}
