// The page: a conversation sidebar and the open conversation, whose id lives in the URL (?c=…).
import { useEffect, useEffectEvent, useRef, useState } from 'react';
import { answerOffer, useAccount } from './hooks/useAccount';
import { useConversations } from './hooks/useConversations';
import { idFromUrl, showInUrl, useOpenConversation } from './hooks/useOpenConversation';
import { TopBarSlot } from './hooks/useTopBar';
import { useUndoableDelete } from './hooks/useUndoableDelete';
import { type Agent, type ConversationSummary, listAgents, listProfiles, type Profile } from './lib/api';
import { AccountBar, ClaimOffer, SignInScreen } from './components/Account';
import { Chat } from './components/Chat';
import { ConfirmDelete, UndoDelete } from './components/Deleting';
import { MarkdownPreload } from './components/Message';
import { Sidebar } from './components/Sidebar';
import { TopBar } from './components/TopBar';

export function App() {
  const [query, setQuery] = useState('');
  const [loadError, setLoadError] = useState<string | null>(null);
  const [profiles, setProfiles] = useState<Profile[]>([]);
  const [agents, setAgents] = useState<Agent[]>([]);
  const [topBarSlot, setTopBarSlot] = useState<HTMLElement | null>(null); // where a phone shows the chat's header
  const [menuOpen, setMenuOpen] = useState(false); // the sidebar, on a narrow screen
  const [claims, setClaims] = useState(0); // a claim may bring the open conversation's history: shown afresh
  const [confirming, setConfirming] = useState<ConversationSummary | null>(null);

  const { account, user, claimable, setClaimable, earlier, setEarlier } = useAccount();

  const deletingIdRef = useRef<string | null>(null); // deleted but still undoable: not listed meanwhile
  const list = useConversations(query, setLoadError, deletingIdRef);
  const { conversations, refresh: refreshList } = list;

  const { open, openConversation } = useOpenConversation(setLoadError);
  // Until the keep offer is answered, the conversation in the URL is still the anonymous visitor's: read as the
  // user it is not found. It is read once kept (or left for a new chat), not before.
  const openFromUrl = useEffectEvent(() => void openConversation(idFromUrl(), false, claimable === 0));

  useEffect(() => {
    if (!account) return;
    listProfiles().then(setProfiles, () => setProfiles([])); // without the list, the default is used
    listAgents().then(setAgents, () => setAgents([]));
    openFromUrl();
    const onPopState = () => void openConversation(idFromUrl(), false);
    window.addEventListener('popstate', onPopState);
    return () => window.removeEventListener('popstate', onPopState);
  }, [account, refreshList, openConversation]);

  useEffect(() => {
    if (account) void refreshList(); // at the start, and for each new search
  }, [account, refreshList]);

  const deletion = useUndoableDelete(
    {
      isOpen: (id) => open?.id === id,
      unlist: list.unlist,
      refresh: refreshList,
      open: (id) => void openConversation(id, true),
      onError: setLoadError,
    },
    deletingIdRef,
  );

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
      {/* On a narrow screen the sidebar is a drawer behind the top bar's menu button. */}
      <TopBar menuOpen={menuOpen} onMenu={() => setMenuOpen(!menuOpen)} onNew={startNew} slot={setTopBarSlot} />
      {/* A click beside the open menu closes it; from the keyboard, its button does. */}
      {menuOpen && <div className="backdrop" onClick={() => setMenuOpen(false)} />}
      <Sidebar
        open={menuOpen}
        conversations={conversations}
        more={list.next !== null}
        query={query}
        onSearch={setQuery}
        onMore={list.loadMore}
        activeId={open?.id ?? null}
        onNew={startNew}
        onOpen={(id) => {
          setMenuOpen(false);
          void openConversation(id, true);
        }}
        onDelete={(id) => setConfirming(conversations.find((c) => c.id === id) ?? null)}
        onRename={(id, title) => void list.rename(id, title)}
        onClose={() => {
          setMenuOpen(false);
          document.querySelector<HTMLElement>('[data-testid="menu"]')?.focus(); // back where the drawer was opened
        }}
        footer={
          signInOffered ? (
            <AccountBar
              user={user}
              earlier={claimable > 0 ? 0 : earlier}
              onKeepEarlier={() => {
                setClaimable(earlier);
                setEarlier(0);
              }}
            />
          ) : undefined
        }
      />
      {confirming && (
        <ConfirmDelete
          conversation={confirming}
          onConfirm={() => {
            setConfirming(null);
            deletion.remove(confirming);
          }}
          onCancel={() => setConfirming(null)}
        />
      )}
      {deletion.deleted && <UndoDelete conversation={deletion.deleted.conversation} onUndo={deletion.undo} />}
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
              setEarlier(claimed ? 0 : claimable); // "Not now": the account bar offers them again
              setClaimable(0);
              answerOffer(user);
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
                if (!query.trim()) list.listNew(open.id, text);
              }}
              onTitle={(title) => list.retitle(open.id, title)}
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
