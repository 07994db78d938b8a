import { type ReactNode, useState } from 'react';
import type { ConversationSummary } from '../lib/api';

type Props = {
  open: boolean; // shown, on a narrow screen where it is a drawer
  conversations: ConversationSummary[];
  activeId: string | null;
  onNew: () => void;
  onOpen: (id: string) => void;
  onDelete: (id: string) => void;
  onRename: (id: string, title: string) => void;
  footer?: ReactNode; // who is signed in, when the server offers accounts
};

export function Sidebar({ open, conversations, activeId, onNew, onOpen, onDelete, onRename, footer }: Props) {
  const [renaming, setRenaming] = useState<string | null>(null); // the conversation whose title is being edited
  return (
    <nav className={open ? 'sidebar open' : 'sidebar'} aria-label="Conversations" data-testid="sidebar">
      <div className="brand">threadline</div>
      <button type="button" className="new-chat" onClick={onNew}>
        + New chat
      </button>
      {conversations.length === 0 ? (
        <p className="muted small">No conversations yet.</p>
      ) : (
        <ul className="conversations">
          {conversations.map((conversation) => (
            <li key={conversation.id} className={conversation.id === activeId ? 'active' : undefined}>
              {renaming === conversation.id ? (
                <input
                  className="rename"
                  aria-label={`New title for “${conversation.title}”`}
                  defaultValue={conversation.title}
                  maxLength={120}
                  autoFocus
                  onFocus={(event) => event.target.select()}
                  onKeyDown={(event) => {
                    if (event.key === 'Escape') setRenaming(null);
                    if (event.key !== 'Enter') return;
                    const title = event.currentTarget.value.trim();
                    if (title && title !== conversation.title) onRename(conversation.id, title);
                    setRenaming(null);
                  }}
                  onBlur={() => setRenaming(null)}
                />
              ) : (
              <button
                type="button"
                className="open"
                data-testid="open-conversation"
                aria-current={conversation.id === activeId ? 'page' : undefined}
                onClick={() => onOpen(conversation.id)}
                title={conversation.title}
              >
                {conversation.title}
              </button>
              )}
              <button
                type="button"
                className="rename-button"
                aria-label={`Rename conversation “${conversation.title}”`}
                onClick={() => setRenaming(conversation.id)}
              >
                ✎
              </button>
              <button
                type="button"
                className="delete"
                aria-label={`Delete conversation “${conversation.title}”`}
                onClick={() => onDelete(conversation.id)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {footer}
    </nav>
  );
}
