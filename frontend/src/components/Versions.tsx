// Edits and regenerated answers keep what they replace (the server's versions): "‹ 2/3 ›" switches between
// them, and the edit box sends a message in place of one.
import { useState } from 'react';

type SwitcherProps = { version: number; versions: number; onShow?: (version: number) => void };

/** ChatGPT's "‹ 2/3 ›": which version is shown, and the way to the others (none while an answer streams). */
export function VersionSwitcher({ version, versions, onShow }: SwitcherProps) {
  return (
    <span className="versions" role="group" aria-label={`Version ${version} of ${versions}`} data-testid="versions">
      <button
        type="button"
        aria-label="Previous version"
        data-testid="previous-version"
        disabled={!onShow || version <= 1}
        onClick={() => onShow?.(version - 1)}
      >
        ‹
      </button>
      <span data-testid="version-number">
        {version}/{versions}
      </span>
      <button
        type="button"
        aria-label="Next version"
        data-testid="next-version"
        disabled={!onShow || version >= versions}
        onClick={() => onShow?.(version + 1)}
      >
        ›
      </button>
    </span>
  );
}

type EditProps = { text: string; onSave: (text: string) => void; onCancel: () => void };

/** A sent message, edited in place: Send answers the new text from before it; the old one stays a version. */
export function EditBox({ text, onSave, onCancel }: EditProps) {
  const [draft, setDraft] = useState(text);
  const trimmed = draft.trim();
  return (
    <form
      className="edit-box"
      data-testid="edit-box"
      onSubmit={(event) => {
        event.preventDefault();
        if (trimmed) onSave(trimmed);
      }}
    >
      <textarea
        aria-label="Edit your message"
        data-testid="edit-text"
        rows={Math.min(8, draft.split('\n').length + 1)}
        value={draft}
        autoFocus
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Escape') onCancel();
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            if (trimmed) onSave(trimmed);
          }
        }}
      />
      <div className="edit-actions">
        <button type="button" onClick={onCancel} data-testid="edit-cancel">
          Cancel
        </button>
        <button type="submit" className="primary" disabled={!trimmed || trimmed === text} data-testid="edit-send">
          Send
        </button>
      </div>
    </form>
  );
}
