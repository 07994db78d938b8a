// The sidebar's list: the visitor's conversations matching the search, page after page, a new one listed as
// soon as its first message is sent, renamed in place; refreshed after each answer.
import { type RefObject, useCallback, useEffect, useRef, useState } from 'react';
import { type ConversationSummary, describeError, listConversations, renameConversation } from '../lib/api';

/** `deletingRef`: a conversation deleted but still undoable, which the server lists until its time is up. */
export function useConversations(
  query: string,
  onError: (message: string | null) => void,
  deletingRef: RefObject<string | null>,
) {
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  const [next, setNext] = useState<string | null>(null); // the list's next page, when there is one
  const listed = useRef(0);
  useEffect(() => {
    listed.current = conversations.length;
  }, [conversations]);

  // As many as are listed, up to 100; a failure when `quiet` says nothing more than the chat's own banner does.
  const refresh = useCallback(
    (quiet = false) =>
      listConversations(query, Math.min(100, Math.max(50, listed.current))).then(
        (page) => {
          setConversations(page.conversations.filter((c) => c.id !== deletingRef.current));
          setNext(page.next);
          onError(null); // the server is back: what said it was not goes
        },
        (error: Error) => {
          if (!quiet) onError(describeError(error));
        },
      ),
    [query, onError, deletingRef],
  );

  const loading = useRef<string | null>(null); // the next page on its way: asked for once
  const loadMore = useCallback(() => {
    if (!next || loading.current === next) return;
    loading.current = next;
    listConversations(query, 50, next).then(
      (page) => {
        setConversations((shown) => [...shown, ...page.conversations.filter((c) => !shown.some((s) => s.id === c.id))]);
        setNext(page.next);
      },
      (error: Error) => onError(describeError(error)),
    );
  }, [next, query, onError]);

  /** A new conversation is listed as soon as its first message is sent, titled by it until the server's title. */
  const listNew = useCallback((id: string, text: string) => {
    const now = new Date().toISOString();
    const title = text.trim().split('\n')[0].slice(0, 80) || 'New chat';
    setConversations((shown) =>
      shown.some((conversation) => conversation.id === id)
        ? shown
        : [{ id, title, createdAt: now, lastMessageAt: now }, ...shown],
    );
  }, []);

  const rename = async (id: string, title: string) => {
    try {
      await renameConversation(id, title);
      await refresh();
    } catch (error) {
      onError(describeError(error as Error));
    }
  };

  /** A title the server sent for one of them (a generated title). */
  const retitle = (id: string, title: string) =>
    setConversations((shown) => shown.map((c) => (c.id === id ? { ...c, title } : c)));
  const unlist = (id: string) => setConversations((shown) => shown.filter((c) => c.id !== id));

  return { conversations, next, refresh, loadMore, listNew, rename, retitle, unlist };
}
