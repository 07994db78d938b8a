// The page: a conversation sidebar and the open conversation, whose id lives in the URL (?c=…).
import { useCallback, useEffect, useRef, useState } from 'react';
import type { User } from 'oidc-client-ts';
import {
  anonymousConversations,
  type ChatMessage,
  type ConversationSummary,
  deleteConversation,
  renameConversation,
  describeError,
  listConversations,
  listAgents,
  listProfiles,
  loadConversation,
  newConversationId,
  type Agent,
  type Profile,
} from './lib/api';
import { type Account, startAccount } from './lib/auth';
import { AccountBar, ClaimOffer, SignInScreen } from './components/Account';
import { Chat } from './components/Chat';
import { TopBarSlot } from './hooks/useTopBar';
import { ConfirmDelete, UNDO_SECONDS, UndoDelete } from './components/Deleting';
import { Sidebar } from './components/Sidebar';
import { MarkdownPreload } from './components/Message';

function idFromUrl(): string | null {
  return new URLSearchParams(window.location.search).get('c');
}

function showInUrl(id: string | null, replace = false) {
  const url = id ? `?c=${encodeURIComponent(id)}` : window.location.pathname;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
}

type Open = { id: string; messages: ChatMessage[] };

export function App() {
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  const [next, setNext] = useState<string | null>(null); // the list's next page, when there is one
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState<Open | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [profiles, setProfiles] = useState<Profile[]>([]);
  const [agents, setAgents] = useState<Agent[]>([]);
  const [topBarSlot, setTopBarSlot] = useState<HTMLElement | null>(null); // where a phone shows the chat's header
  const [menuOpen, setMenuOpen] = useState(false); // the sidebar, on a narrow screen
  const [account, setAccount] = useState<Account | null>(null); // null until the sign-in state is known
  const [user, setUser] = useState<User | null>(null);
  const [claimable, setClaimable] = useState(0); // anonymous conversations to offer, just after signing in
  const [claims, setClaims] = useState(0); // a claim may bring the open conversation's history: shown afresh

  // First who is asking: every request after this one carries the signed-in user's token.
  useEffect(() => {
    startAccount(setUser).then(async (started) => {
      setUser(started.user);
      if (started.justSignedIn && started.user) setClaimable(await anonymousConversations());
      setAccount(started);
    });
  }, []);

  // Refreshed after each answer (as many as are listed, up to 100); a failure then says nothing more than the
  // chat's own banner does.
  // A conversation deleted but still undoable: not listed, though the server has it until the time is up.
  const deleting = useRef<{ id: string; timer: ReturnType<typeof setTimeout> } | null>(null);
  const listed = useRef(0);
  useEffect(() => {
    listed.current = conversations.length;
  }, [conversations]);
  const refreshList = useCallback(
    (quiet = false) =>
      listConversations(query, Math.min(100, Math.max(50, listed.current))).then(
        (page) => {
          setConversations(page.conversations.filter((c) => c.id !== deleting.current?.id));
          setNext(page.next);
          setLoadError(null); // the server is back: what said it was not goes
        },
        (error: Error) => {
          if (!quiet) setLoadError(describeError(error));
        },
      ),
    [query],
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
      (error: Error) => setLoadError(describeError(error)),
    );
  }, [next, query]);

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

  // A promise chain rather than await: a new chat (no id) must not set state within the effect that opens it.
  const openConversation = useCallback((id: string | null, push: boolean) => {
    const target = id ?? newConversationId();
    const loaded: Promise<ChatMessage[]> = id ? loadConversation(id) : Promise.resolve([]);
    return loaded.then(
      (messages) => {
        setLoadError(null);
        setOpen({ id: target, messages });
        if (push) showInUrl(id ? target : null);
      },
      (error: Error) => {
        setLoadError(describeError(error));
        setOpen({ id: target, messages: [] });
      },
    );
  }, []);

  useEffect(() => {
    if (!account) return;
    listProfiles().then(setProfiles, () => setProfiles([]));  // without the list, the default is used
    listAgents().then(setAgents, () => setAgents([]));
    void openConversation(idFromUrl(), false);
    const onPopState = () => void openConversation(idFromUrl(), false);
    window.addEventListener('popstate', onPopState);
    return () => window.removeEventListener('popstate', onPopState);
  }, [account, refreshList, openConversation]);

  useEffect(() => {
    if (account) void refreshList(); // at the start, and for each new search
  }, [account, refreshList]);

  // A deletion waits UNDO_SECONDS for an Undo before it reaches the server; leaving the page sends it at once.
  const [confirming, setConfirming] = useState<ConversationSummary | null>(null);
  const [deleted, setDeleted] = useState<{ conversation: ConversationSummary; wasOpen: boolean } | null>(null);

  /** The deletion waiting for its time to be up, no longer waiting (its toast gone), or null. */
  const takeDeleting = useCallback(() => {
    const pending = deleting.current;
    if (pending) {
      clearTimeout(pending.timer);
      deleting.current = null;
      setDeleted(null);
    }
    return pending;
  }, []);

  const finishDeleting = useCallback(
    (keepalive = false) => {
      const pending = takeDeleting();
      if (!pending) return;
      deleteConversation(pending.id, keepalive).catch((error: Error) => {
        setLoadError(describeError(error));
        void refreshList(true); // it is still there
      });
    },
    [refreshList, takeDeleting],
  );

  useEffect(() => {
    const leaving = () => finishDeleting(true);
    window.addEventListener('pagehide', leaving);
    return () => window.removeEventListener('pagehide', leaving);
  }, [finishDeleting]);

  const onDelete = (conversation: ConversationSummary) => {
    setConfirming(null);
    finishDeleting(); // one at a time: an earlier one goes now
    const wasOpen = open?.id === conversation.id;
    setConversations((shown) => shown.filter((c) => c.id !== conversation.id));
    setDeleted({ conversation, wasOpen });
    deleting.current = { id: conversation.id, timer: setTimeout(() => finishDeleting(), UNDO_SECONDS * 1000) };
    if (wasOpen) void openConversation(null, true);
  };

  const undoDelete = () => {
    if (!deleted || !takeDeleting()) return;
    void refreshList();
    if (deleted.wasOpen) void openConversation(deleted.conversation.id, true);
  };

  const onRename = async (id: string, title: string) => {
    try {
      await renameConversation(id, title);
      await refreshList();
    } catch (error) {
      setLoadError(describeError(error as Error));
    }
  };

  // The browser tab says which conversation is open.
  const openTitle = conversations.find((conversation) => conversation.id === open?.id)?.title;
  useEffect(() => {
    document.title = openTitle ? `${openTitle} · threadline` : 'threadline';
  }, [openTitle]);

  const startNew = () => {
    setMenuOpen(false);
    void openConversation(null, true);
  };

  if (!account) return <div className="layout" />;
  const signInOffered = Boolean(account.config.issuer && account.config.clientId);
  if (signInOffered && !account.config.anonymous && !user) {
    return <SignInScreen error={account.error} />;
  }

  return (
    <div className="layout">
      {/* On a narrow screen the sidebar is a drawer behind this bar's menu button. */}
      <header className="topbar">
        <button
          type="button"
          className="menu"
          data-testid="menu"
          aria-label="Conversations"
          aria-expanded={menuOpen}
          onClick={() => setMenuOpen(!menuOpen)}
        >
          ☰
        </button>
        <span className="brand">threadline</span>
        <div className="topbar-slot" ref={setTopBarSlot} />
        <button type="button" className="new-chat" onClick={startNew}>
          + New chat
        </button>
      </header>
      {/* A click beside the open menu closes it; from the keyboard, its button does. */}
      {menuOpen && <div className="backdrop" onClick={() => setMenuOpen(false)} />}
      <Sidebar
        open={menuOpen}
        conversations={conversations}
        more={next !== null}
        query={query}
        onSearch={setQuery}
        onMore={loadMore}
        activeId={open?.id ?? null}
        onNew={startNew}
        onOpen={(id) => {
          setMenuOpen(false);
          void openConversation(id, true);
        }}
        onDelete={(id) => setConfirming(conversations.find((c) => c.id === id) ?? null)}
        onRename={(id, title) => void onRename(id, title)}
        onClose={() => {
          setMenuOpen(false);
          document.querySelector<HTMLElement>('[data-testid="menu"]')?.focus(); // back where the drawer was opened
        }}
        footer={signInOffered ? <AccountBar user={user} /> : undefined}
      />
      {confirming && (
        <ConfirmDelete conversation={confirming} onConfirm={() => onDelete(confirming)} onCancel={() => setConfirming(null)} />
      )}
      {deleted && <UndoDelete conversation={deleted.conversation} onUndo={undoDelete} />}
      <main className="main">
        {(conversations.length > 0 || idFromUrl()) && <MarkdownPreload />}
        {(loadError ?? account.error) && (
          <div className="banner" role="alert">
            {loadError ?? account.error}
          </div>
        )}
        {claimable > 0 && (
          <ClaimOffer
            count={claimable}
            onDone={(claimed) => {
              setClaimable(0);
              // Not kept: the open conversation is the anonymous identity's, so the account starts a new one
              // rather than a conversation of its own under that id.
              if (!claimed) return startNew();
              void refreshList();
              if (open) void openConversation(open.id, false).then(() => setClaims((count) => count + 1));
            }}
          />
        )}
        {open && (
          <TopBarSlot.Provider value={topBarSlot}>
            <Chat
              key={`${open.id}:${claims}`}
              id={open.id}
              initialMessages={open.messages}
              profiles={profiles}
              agents={agents}
              agentId={conversations.find((conversation) => conversation.id === open.id)?.agentId ?? undefined}
              onFirstMessage={(text) => {
                showInUrl(open.id, true);
                if (!query.trim()) listNew(open.id, text);
              }}
              onTitle={(title) =>
                setConversations((shown) => shown.map((c) => (c.id === open.id ? { ...c, title } : c)))
              }
              onAnswered={() => void refreshList(true)}
              onNewChat={startNew}
              hold={claimable > 0 ? 'Answer the question above first' : undefined}
              title={conversations.find((conversation) => conversation.id === open.id)?.title}
            />
          </TopBarSlot.Provider>
        )}
      </main>
    </div>
  );
}
