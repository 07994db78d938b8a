// The newest message stays in view while the reader is at the bottom; scrolling up to read stays put.
import { useEffect, useRef, useState } from 'react';

/** `changes`: what moves the bottom (the messages, the thinking indicator). */
export function useFollowBottom(...changes: unknown[]) {
  const logRef = useRef<HTMLDivElement>(null);
  const endRef = useRef<HTMLDivElement>(null);
  const [atBottom, setAtBottom] = useState(true);
  const onScroll = () => {
    const log = logRef.current;
    if (log) setAtBottom(log.scrollHeight - log.scrollTop - log.clientHeight < 48);
  };

  useEffect(() => {
    if (atBottom) endRef.current?.scrollIntoView({ block: 'end' });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `changes` are the caller's deps
  }, [atBottom, ...changes]);

  // The on-screen keyboard (or a rotated phone) shrinks the viewport: a reader at the newest message stays there.
  useEffect(() => {
    const viewport = window.visualViewport;
    if (!atBottom || !viewport) return;
    const follow = () => endRef.current?.scrollIntoView({ block: 'end' });
    viewport.addEventListener('resize', follow);
    return () => viewport.removeEventListener('resize', follow);
  }, [atBottom]);

  /** One's own message is always followed. */
  const follow = () => setAtBottom(true);
  const toEnd = () => endRef.current?.scrollIntoView({ block: 'end', behavior: 'smooth' });
  return { logRef, endRef, onScroll, follow, atBottom, toEnd };
}
