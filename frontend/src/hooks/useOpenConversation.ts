// The open conversation, whose id lives in the URL (?c=…): opened from the list, a new chat, or the browser's
// back and forward buttons.
import { useCallback, useState } from 'react';
import { type ChatMessage, describeError, loadConversation, newConversationId } from '../lib/api';

export type Open = { id: string; messages: ChatMessage[] };

export function idFromUrl(): string | null {
  return new URLSearchParams(window.location.search).get('c');
}

export function showInUrl(id: string | null, replace = false) {
  const url = id ? `?c=${encodeURIComponent(id)}` : window.location.pathname;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
}

export function useOpenConversation(onError: (message: string | null) => void) {
  const [open, setOpen] = useState<Open | null>(null);

  // A promise chain rather than await: a new chat (no id) must not set state within the effect that opens it.
  // `load: false` opens it unread: one the signed-in user cannot read yet (the anonymous one a keep offer is about).
  const openConversation = useCallback(
    (id: string | null, push: boolean, load = true) => {
      const target = id ?? newConversationId();
      const loaded: Promise<ChatMessage[]> = id && load ? loadConversation(id) : Promise.resolve([]);
      return loaded.then(
        (messages) => {
          onError(null);
          setOpen({ id: target, messages });
          if (push) showInUrl(id ? target : null);
        },
        (error: Error) => {
          onError(describeError(error));
          setOpen({ id: target, messages: [] });
        },
      );
    },
    [onError],
  );

  return { open, openConversation };
}
