// The conversation list: a search box, the conversations grouped by when they were last used, more of them
// loaded as the list scrolls to its end, and each one's rename and delete.
import { type ReactNode, useEffect, useRef, useState } from 'react';
import type { ConversationSummary } from '../lib/api';
import { ThemeToggle } from './ThemeToggle';

type Props = {
  open: boolean; // shown, on a narrow screen where it is a drawer
  conversations: ConversationSummary[];
  more: boolean; // more conversations follow the ones listed
  query: string;
  activeId: string | null;
  onNew: () => void;
  onOpen: (id: string) => void;
  onDelete: (id: string) => void;
  onRename: (id: string, title: string) => void;
  onSearch: (query: string) => void;
  onMore: () => void;
  onClose: () => void; // the drawer asks to close (Escape)
  footer?: ReactNode; // who is signed in, when the server offers accounts
};

const DAY = 24 * 60 * 60 * 1000;

/** Today, Yesterday, Last 7 days, Last 30 days or Older, by the calendar of the person's own time zone. */
export function groupOf(lastMessageAt: string, now = new Date()): string {
  const midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  const at = new Date(lastMessageAt).getTime();
  if (at >= midnight) return 'Today';
  if (at >= midnight - DAY) return 'Yesterday';
  if (at >= midnight - 6 * DAY) return 'Last 7 days';
  if (at >= midnight - 29 * DAY) return 'Last 30 days';
  return 'Older';
}

function grouped(conversations: ConversationSummary[]): [string, ConversationSummary[]][] {
  const groups = new Map<string, ConversationSummary[]>();
  for (const conversation of conversations) {
    const group = groupOf(conversation.lastMessageAt);
    groups.set(group, [...(groups.get(group) ?? []), conversation]);
  }
  return [...groups];
}

export function Sidebar(props: Props) {
  const { open, conversations, more, query, activeId, onNew, onOpen, onDelete, onRename, onSearch, onMore, onClose } =
    props;
  const nav = useRef<HTMLElement>(null);

  // Opened as a drawer, it takes the focus (its search box), and Escape closes it.
  useEffect(() => {
    if (open) nav.current?.querySelector<HTMLElement>('input.search')?.focus();
  }, [open]);
  const [renaming, setRenaming] = useState<string | null>(null); // the conversation whose title is being edited
  const [typed, setTyped] = useState(query);
  const end = useRef<HTMLDivElement>(null);

  // The search waits for a pause in typing.
  useEffect(() => {
    const timer = setTimeout(() => onSearch(typed), 250);
    return () => clearTimeout(timer);
  }, [typed, onSearch]);

  // The list's end coming into view loads the next page.
  useEffect(() => {
    const sentinel = end.current;
    if (!sentinel || !more) return;
    const observer = new IntersectionObserver((entries) => entries.some((entry) => entry.isIntersecting) && onMore());
    observer.observe(sentinel);
    return () => observer.disconnect();
  }, [more, onMore, conversations.length]);

  return (
    <nav
      ref={nav}
      className={open ? 'sidebar open' : 'sidebar'}
      aria-label="Conversations"
      data-testid="sidebar"
      onKeyDown={(event) => {
        if (open && event.key === 'Escape' && !event.defaultPrevented) onClose();
      }}
    >
      <div className="brand">threadline</div>
      <button type="button" className="new-chat" onClick={onNew}>
        + New chat
      </button>
      <input
        type="search"
        className="search"
        aria-label="Search conversations"
        placeholder="Search"
        data-testid="search"
        maxLength={200}
        value={typed}
        onChange={(event) => setTyped(event.target.value)}
      />
      {conversations.length === 0 ? (
        <p className="muted small" data-testid="no-conversations">
          {query.trim() ? 'No conversation matches.' : 'No conversations yet.'}
        </p>
      ) : (
        grouped(conversations).map(([group, members]) => (
          <section key={group} className="conversation-group" aria-label={group}>
            <h2 className="group-title">{group}</h2>
            <ul className="conversations">
              {members.map((conversation) => (
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
                        if (event.key === 'Escape') {
                          event.preventDefault(); // the rename is cancelled, not the drawer closed
                          event.currentTarget.value = conversation.title; // cancelled: the blur keeps nothing
                          setRenaming(null);
                        }
                        if (event.key === 'Enter') event.currentTarget.blur();
                      }}
                      onBlur={(event) => {
                        // Enter or a click away keeps the new title; Escape put the old one back first.
                        const title = event.currentTarget.value.trim();
                        if (title && title !== conversation.title) onRename(conversation.id, title);
                        setRenaming(null);
                      }}
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
          </section>
        ))
      )}
      {more && <div ref={end} className="list-end" data-testid="more-conversations" aria-hidden="true" />}
      <div className="sidebar-foot">
        <ThemeToggle />
        {props.footer}
      </div>
    </nav>
  );
}
