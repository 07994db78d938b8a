// A suggested action: the page's own (a new chat, a copy), or the server's, whose answer is resumed as it goes on.
import { useState } from 'react';
import { type ChatMessage, describeError, loadConversation, runAction, type SuggestedAction } from '../lib/api';
import { copyText } from '../lib/clipboard';
import { textOf } from '../lib/messages';

type Chat = {
  messages: ChatMessage[];
  setMessages: (messages: ChatMessage[]) => void;
  resumeStream: () => Promise<unknown>;
};
type Page = { onNewChat: () => void; onAnswered: () => void; onWarning: (text: string | null) => void };

export function useServerAction(id: string, chat: Chat, page: Page) {
  const [acting, setActing] = useState(false); // a server action is on its way

  const act = async (answer: ChatMessage, action: SuggestedAction) => {
    page.onWarning(null);
    if (action.handler === 'client') {
      if (action.action === 'new_chat') page.onNewChat();
      else if (action.action === 'copy_answer') {
        page.onWarning((await copyText(textOf(answer).trim())) ? 'Copied the answer.' : 'Could not copy the answer.');
      } else page.onWarning(`This page cannot do “${action.label}”.`);
      return;
    }
    setActing(true);
    try {
      const outcome = await runAction(id, answer.id, action);
      if (outcome.kind === 'result') {
        page.onWarning(outcome.message || `Done: ${action.label}.`);
        return;
      }
      const asked: ChatMessage | null = outcome.userMessageId
        ? { id: outcome.userMessageId, role: 'user', parts: [{ type: 'text', text: outcome.text ?? '' }] }
        : null;
      // A new question goes after the answer; an answer written again replaces it.
      chat.setMessages(asked ? [...chat.messages, asked] : chat.messages.slice(0, -1));
      await chat.resumeStream();
      chat.setMessages(await loadConversation(id)); // also when the answer ended before the stream was asked for
      page.onAnswered();
    } catch (failure) {
      page.onWarning(describeError(failure as Error));
    } finally {
      setActing(false);
    }
  };

  return { act, acting };
}
