// Deleting a conversation: asked first, then undoable for a few seconds, and only then deleted on the server
// (at once when the page is left meanwhile).
import { useEffect, useRef } from 'react';
import type { ConversationSummary } from '../lib/api';

export const UNDO_SECONDS = 6;

type ConfirmProps = { conversation: ConversationSummary; onConfirm: () => void; onCancel: () => void };

export function ConfirmDelete({ conversation, onConfirm, onCancel }: ConfirmProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => dialog.current?.showModal(), []);
  return (
    <dialog
      ref={dialog}
      className="share-dialog"
      aria-labelledby="delete-title"
      data-testid="confirm-delete"
      onClose={onCancel}
    >
      <h2 id="delete-title">Delete “{conversation.title}”?</h2>
      <p className="muted">Its messages, versions, files and link go with it.</p>
      <div className="share-actions">
        <button type="button" autoFocus onClick={() => dialog.current?.close()}>
          Cancel
        </button>
        <button type="button" className="danger-solid" data-testid="confirm-delete-button" onClick={onConfirm}>
          Delete
        </button>
      </div>
    </dialog>
  );
}

export function UndoDelete({ conversation, onUndo }: { conversation: ConversationSummary; onUndo: () => void }) {
  return (
    <div className="toast" role="status" data-testid="deleted">
      <span>Deleted “{conversation.title}”.</span>
      <button type="button" data-testid="undo-delete" onClick={onUndo}>
        Undo
      </button>
    </div>
  );
}
