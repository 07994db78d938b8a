import type { ReactNode } from 'react';
import type { ConversationSummary } from '../lib/api';

type Props = {
  open: boolean; // shown, on a narrow screen where it is a drawer
  conversations: ConversationSummary[];
  activeId: string | null;
  onNew: () => void;
  onOpen: (id: string) => void;
  onDelete: (id: string) => void;
  footer?: ReactNode; // who is signed in, when the server offers accounts
};

export function Sidebar({ open, conversations, activeId, onNew, onOpen, onDelete, footer }: Props) {
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
