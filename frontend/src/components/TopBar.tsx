// On a narrow screen, the bar on top: the menu that opens the conversations, the conversation's header (its
// slot, hooks/useTopBar.ts) and "New chat".
type Props = { menuOpen: boolean; onMenu: () => void; onNew: () => void; slot: (element: HTMLDivElement | null) => void };

export function TopBar({ menuOpen, onMenu, onNew, slot }: Props) {
  return (
    <header className="topbar">
      <button
        type="button"
        className="menu"
        data-testid="menu"
        aria-label="Conversations"
        aria-expanded={menuOpen}
        onClick={onMenu}
      >
        ☰
      </button>
      <span className="brand">threadline</span>
      <div className="topbar-slot" ref={slot} />
      <button type="button" className="new-chat" onClick={onNew}>
        + New chat
      </button>
    </header>
  );
}
