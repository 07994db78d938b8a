// What the person wrote and has not yet had accepted by the server, kept per conversation in localStorage:
// the draft in the message box (across reloads and conversation switches), and a message on its way, which
// comes back into the box after a reload if the server never took it (it was down, or refused it).
import type { FileUIPart } from 'ai';

export type Draft = { text: string; files: FileUIPart[] };
// A message on its way, with how many messages of the person's the conversation held when it went: once the
// history holds more, the server took it, whatever it held (a file with no text, say).
type Outgoing = Draft & { after?: number };

const EMPTY: Draft = { text: '', files: [] };
const draftKey = (conversationId: string) => `threadline:draft:${conversationId}`;
const outgoingKey = (conversationId: string) => `threadline:outgoing:${conversationId}`;

function read(key: string): Draft | null {
  try {
    const value = JSON.parse(localStorage.getItem(key) ?? 'null') as Draft | null;
    return value && typeof value.text === 'string' && Array.isArray(value.files) ? value : null;
  } catch {
    return null; // storage off or a value of another version: no draft
  }
}

function write(key: string, draft: Draft | null) {
  try {
    if (draft && (draft.text || draft.files.length)) localStorage.setItem(key, JSON.stringify(draft));
    else localStorage.removeItem(key);
  } catch {
    // storage full or off: the draft lives only in the page
  }
}

/** Drop every draft and message on its way (at sign-out: what a person typed is not left for whoever comes next). */
export function forgetAllDrafts() {
  try {
    for (const key of Object.keys(localStorage)) {
      if (key.startsWith('threadline:draft:') || key.startsWith('threadline:outgoing:')) localStorage.removeItem(key);
    }
  } catch {
    // storage off: nothing was kept
  }
}

export const loadDraft = (conversationId: string): Draft => read(draftKey(conversationId)) ?? EMPTY;
export const saveDraft = (conversationId: string, draft: Draft) => write(draftKey(conversationId), draft);

/** Remember a message from the moment it is sent until the server has taken it; `after`: how many messages of
 * the person's the conversation held then. */
export const rememberOutgoing = (conversationId: string, draft: Draft, after: number) =>
  write(outgoingKey(conversationId), { ...draft, after } as Outgoing);
export const forgetOutgoing = (conversationId: string) => write(outgoingKey(conversationId), null);

/** A message that was on its way when the page went away, and that the history does not hold, goes back into the
 * box (before the draft typed since, if any); true when one did. `sent`: the person's messages in the history. */
export function restoreOutgoing(conversationId: string, sent: string[]): boolean {
  const outgoing = read(outgoingKey(conversationId)) as Outgoing | null;
  forgetOutgoing(conversationId);
  if (!outgoing) return false;
  const taken =
    typeof outgoing.after === 'number'
      ? sent.length > outgoing.after
      : Boolean(outgoing.text) && outgoing.text === sent.at(-1); // one remembered by an earlier version
  if (taken) return false;
  const draft = loadDraft(conversationId);
  const text = [outgoing.text, draft.text].filter(Boolean).join('\n\n');
  saveDraft(conversationId, { text, files: [...outgoing.files, ...draft.files] });
  return true;
}
