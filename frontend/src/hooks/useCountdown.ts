// Seconds left until a moment: the clock ticks once a second while there is one to count down to.
import { useSyncExternalStore } from 'react';

const everySecond = (tick: () => void) => {
  const timer = window.setInterval(tick, 1000);
  return () => window.clearInterval(timer);
};
const never = () => () => undefined;
const seconds = () => Math.floor(Date.now() / 1000);

export function useCountdown(until: number | null): number {
  const now = useSyncExternalStore(until === null ? never : everySecond, seconds);
  return until === null ? 0 : Math.max(0, Math.ceil(until / 1000 - now));
}
