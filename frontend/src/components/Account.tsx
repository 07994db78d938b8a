// Who is chatting: the signed-in user with a way out, or a way in; and, just after signing in, the offer to
// keep what was said anonymously before.
import { useState } from 'react';
import type { User } from 'oidc-client-ts';
import { claimConversations, describeError } from '../lib/api';
import { displayName, signIn, signOut } from '../lib/auth';

export function AccountBar({ user }: { user: User | null }) {
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
    </div>
  );
}

/** Shown once after signing in when the anonymous identity had conversations: nothing moves unless asked. */
export function ClaimOffer({ count, onDone }: { count: number; onDone: (claimed: boolean) => void }) {
  const [state, setState] = useState<'asking' | 'working' | string>('asking');
  const keep = async () => {
    setState('working');
    try {
      await claimConversations();
      onDone(true);
    } catch (error) {
      setState(describeError(error as Error));
    }
  };
  const failed = state !== 'asking' && state !== 'working';
  return (
    <div className="notice claim" role="status" data-testid="claim-offer">
      <span>
        {failed
          ? state
          : `You have ${count} conversation${count === 1 ? '' : 's'} from before you signed in. Keep ${count === 1 ? 'it' : 'them'} in your account?`}
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
