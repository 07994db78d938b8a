// Who is chatting: the signed-in user with a way out, or a way in; and, just after signing in, the offer to
// keep what was said anonymously before.
import { useState } from 'react';
import type { User } from 'oidc-client-ts';
import { type Claimed, claimConversations, describeError } from '../lib/api';
import { displayName, signIn, signOut } from '../lib/auth';

type AccountBarProps = {
  user: User | null;
  earlier?: number; // conversations from before signing in that "Not now" left with the browser
  onKeepEarlier?: () => void; // offer them again
};

export function AccountBar({ user, earlier = 0, onKeepEarlier }: AccountBarProps) {
  if (!user) {
    return (
      <div className="account" data-testid="account">
        <button type="button" className="sign-in" onClick={() => void signIn()}>
          Sign in
        </button>
      </div>
    );
  }
  return (
    <div className="account" data-testid="account">
      <span className="who" title={user.profile.email ?? user.profile.sub}>
        {displayName(user)}
      </span>
      <button type="button" className="sign-out" onClick={() => void signOut()}>
        Sign out
      </button>
      {earlier > 0 && onKeepEarlier && (
        <button type="button" className="keep-earlier" data-testid="keep-earlier" onClick={onKeepEarlier}>
          Keep {conversations(earlier)} from before
        </button>
      )}
    </div>
  );
}

const conversations = (count: number) => `${count} conversation${count === 1 ? '' : 's'}`;

/** What a claim did, in words: what moved, and what stayed with this browser and why. */
function report({ conversations: kept, skipped }: Claimed): string {
  const moved = kept.length ? `${conversations(kept.length)} kept in your account.` : 'Nothing new to keep.';
  if (!skipped.length) return moved;
  const stayed = skipped.length === 1 ? 'stays' : 'stay';
  return `${moved} ${conversations(skipped.length)} ${stayed} with this browser: your account already has one by the same id.`;
}

/** Shown once after signing in when the anonymous identity had conversations: nothing moves unless asked, and
 * nothing can be sent until it is answered (a message sent first would take the id of one to keep). */
export function ClaimOffer({ count, onDone }: { count: number; onDone: (claimed: boolean) => void }) {
  const [state, setState] = useState<'asking' | 'working' | { said: string; claimed: boolean }>('asking');
  const keep = async () => {
    setState('working');
    try {
      setState({ said: report(await claimConversations()), claimed: true });
    } catch (error) {
      setState({ said: describeError(error as Error), claimed: false });
    }
  };
  if (typeof state === 'object') {
    return (
      <div className="notice claim" role="status" data-testid="claim-offer">
        <span>{state.said}</span>
        <span className="claim-buttons">
          <button type="button" onClick={() => onDone(state.claimed)}>
            OK
          </button>
        </span>
      </div>
    );
  }
  return (
    <div className="notice claim" role="status" data-testid="claim-offer">
      <span>
        {`You have ${conversations(count)} from before you signed in. Keep ${count === 1 ? 'it' : 'them'} in your account?`}
      </span>
      <span className="claim-buttons">
        <button type="button" className="primary" disabled={state === 'working'} onClick={() => void keep()}>
          Keep {count === 1 ? 'it' : 'them'}
        </button>
        <button type="button" disabled={state === 'working'} onClick={() => onDone(false)}>
          Not now
        </button>
      </span>
    </div>
  );
}

/** A server that answers signed-in users only (AUTH_ANONYMOUS=deny). */
export function SignInScreen({ error }: { error?: string }) {
  return (
    <div className="sign-in-screen" data-testid="sign-in-screen">
      <h1>threadline</h1>
      <p>Sign in to chat.</p>
      {error && (
        <p className="banner" role="alert">
          {error}
        </p>
      )}
      <button type="button" className="primary" onClick={() => void signIn()}>
        Sign in
      </button>
    </div>
  );
}
