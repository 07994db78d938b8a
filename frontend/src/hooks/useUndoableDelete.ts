// A deletion waits UNDO_SECONDS for an Undo before it reaches the server; leaving the page sends it at once.
import { type RefObject, useCallback, useEffect, useRef, useState } from 'react';
import { UNDO_SECONDS } from '../components/Deleting';
import { type ConversationSummary, deleteConversation, describeError } from '../lib/api';

type Page = {
  isOpen: (id: string) => boolean;
  unlist: (id: string) => void;
  refresh: (quiet?: boolean) => unknown;
  open: (id: string | null) => void; // another conversation (null: a new chat)
  onError: (message: string) => void;
};

/** `deletingIdRef` says which conversation waits, for the list to leave it out meanwhile. */
export function useUndoableDelete(page: Page, deletingIdRef: RefObject<string | null>) {
  const deleting = useRef<{ id: string; timer: ReturnType<typeof setTimeout> } | null>(null);
  const [deleted, setDeleted] = useState<{ conversation: ConversationSummary; wasOpen: boolean } | null>(null);
  const { refresh, onError } = page;

  /** The deletion waiting for its time to be up, no longer waiting (its toast gone), or null. */
  const takeDeleting = useCallback(() => {
    const pending = deleting.current;
    if (pending) {
      clearTimeout(pending.timer);
      deleting.current = deletingIdRef.current = null;
      setDeleted(null);
    }
    return pending;
  }, [deletingIdRef]);

  const finishDeleting = useCallback(
    (keepalive = false) => {
      const pending = takeDeleting();
      if (!pending) return;
      deleteConversation(pending.id, keepalive).catch((error: Error) => {
        onError(describeError(error));
        void refresh(true); // it is still there
      });
    },
    [refresh, onError, takeDeleting],
  );

  useEffect(() => {
    const leaving = () => finishDeleting(true);
    window.addEventListener('pagehide', leaving);
    return () => window.removeEventListener('pagehide', leaving);
  }, [finishDeleting]);

  const remove = (conversation: ConversationSummary) => {
    finishDeleting(); // one at a time: an earlier one goes now
    const wasOpen = page.isOpen(conversation.id);
    page.unlist(conversation.id);
    setDeleted({ conversation, wasOpen });
    deleting.current = { id: conversation.id, timer: setTimeout(() => finishDeleting(), UNDO_SECONDS * 1000) };
    deletingIdRef.current = conversation.id;
    if (wasOpen) page.open(null);
  };

  const undo = () => {
    if (!deleted || !takeDeleting()) return;
    void refresh();
    if (deleted.wasOpen) page.open(deleted.conversation.id);
  };

  return { deleted, remove, undo };
}
