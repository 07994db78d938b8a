// The newest message stays in view while the reader is at the bottom; scrolling up to read stays put.
import { useEffect, useRef, useState } from 'react';

const NEAR = 48; // px from the bottom that still counts as at the bottom

function nearBottom(log: HTMLElement): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < NEAR;
}

/** `changes`: what moves the bottom (the messages, the thinking indicator). */
export function useFollowBottom(...changes: unknown[]) {
  const logRef = useRef<HTMLDivElement>(null);
  const endRef = useRef<HTMLDivElement>(null);
  const [atBottom, setAtBottom] = useState(true);
  // Where following last left the log: a reader who scrolled up since, whose scroll event is still on its
  // way when the next token renders, is not pulled back down by it.
  const followedTop = useRef(0);
  const onScroll = () => {
    const log = logRef.current;
    if (!log) return;
    const bottom = nearBottom(log);
    if (bottom) followedTop.current = log.scrollTop;
    setAtBottom(bottom);
  };

  useEffect(() => {
    const log = logRef.current;
    if (!atBottom || !log) return;
    if (log.scrollTop < followedTop.current - 4 && !nearBottom(log)) {
      setAtBottom(false);
      return;
    }
    endRef.current?.scrollIntoView({ block: 'end' });
    followedTop.current = log.scrollTop;
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
  const follow = () => {
    followedTop.current = 0;
    setAtBottom(true);
  };
  const toEnd = () => endRef.current?.scrollIntoView({ block: 'end', behavior: 'smooth' });
  return { logRef, endRef, onScroll, follow, atBottom, toEnd };
}
