// On a phone, the page has one bar on top: what belongs above a conversation (its agent, model and Share) goes
// into the page's bar instead of a second row under it.
import { createContext, useContext, useSyncExternalStore } from 'react';

/** The element in the page's bar that takes the conversation's header (App provides it). */
export const TopBarSlot = createContext<HTMLElement | null>(null);

const PHONE = '(max-width: 720px)'; // the width at which styles.css shows the top bar

const onWidthChange = (changed: () => void) => {
  const query = window.matchMedia(PHONE);
  query.addEventListener('change', changed);
  return () => query.removeEventListener('change', changed);
};
const isPhone = () => window.matchMedia(PHONE).matches;

/** The page bar's slot while the top bar is shown, else null (the header stays above the conversation). */
export function useTopBarSlot(): HTMLElement | null {
  const phone = useSyncExternalStore(onWidthChange, isPhone);
  const slot = useContext(TopBarSlot);
  return phone ? slot : null;
}
