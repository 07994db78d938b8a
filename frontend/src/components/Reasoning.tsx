// A model's reasoning: "Thinking…" (open) while it thinks, then collapsed to "Thought for N s", which a click
// opens again. Its time is measured while it streams; a reloaded answer says "Reasoning".
import { useState } from 'react';

/** Mounted when the thinking ends: the time since it began. */
function ThoughtFor({ since }: { since: number }) {
  const [ended] = useState(() => Date.now());
  return <>Thought for {Math.max(1, Math.round((ended - since) / 1000))} s</>;
}

export function Reasoning({ text, thinking }: { text: string; thinking: boolean }) {
  const [started] = useState(() => (thinking ? Date.now() : null));
  const [open, setOpen] = useState(false);
  return (
    <details
      className="reasoning"
      data-testid="reasoning"
      open={thinking || open}
      onToggle={(event) => {
        if (!thinking) setOpen(event.currentTarget.open);
      }}
    >
      <summary data-testid="reasoning-summary">
        {thinking ? (
          <>
            <span className="dots" aria-hidden="true" /> Thinking…
          </>
        ) : started !== null ? (
          <ThoughtFor since={started} />
        ) : (
          'Reasoning'
        )}
      </summary>
      <p>{text}</p>
    </details>
  );
}
