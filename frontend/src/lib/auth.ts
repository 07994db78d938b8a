// Signing in with the team's identity provider, when the server offers it (GET /api/auth/config): OpenID
// Connect's authorization-code flow with PKCE through oidc-client-ts, which also renews the tokens silently
// (with the refresh token). Every API request then carries the access token; without it the page is an
// anonymous visitor, as before.
import { type User, UserManager, WebStorageStateStore } from 'oidc-client-ts';
import { forgetAllDrafts } from './drafts';

export type SignInConfig = {
  anonymous: boolean; // whether the server lets visitors chat without signing in
  issuer?: string;
  clientId?: string;
  scopes?: string;
  audience?: string;
};

export type Account = {
  config: SignInConfig;
  user: User | null;
  justSignedIn: boolean; // this page load came back from the provider's sign-in
  error?: string; // the sign-in that came back failed
};

let manager: UserManager | null = null;
let current: User | null = null;

/** The Authorization header's value while someone is signed in. */
export function bearer(): string | undefined {
  return current && !current.expired ? `Bearer ${current.access_token}` : undefined;
}

/** fetch for every API request: with the signed-in user's access token, when there is one. */
export function apiFetch(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
  const authorization = bearer();
  if (!authorization) return fetch(input, init);
  const headers = new Headers(init.headers);
  headers.set('authorization', authorization);
  return fetch(input, { ...init, headers });
}

/** Who the user is, in words: their name, else their email, else their id at the provider. */
export function displayName(user: User): string {
  const { name, email, preferred_username: username, sub } = user.profile;
  return name ?? email ?? username ?? sub;
}

async function readConfig(): Promise<SignInConfig> {
  try {
    const response = await fetch('/api/auth/config');
    if (response.ok) return await response.json();
  } catch {
    // an older server, or none reachable yet: the page is anonymous
  }
  return { anonymous: true };
}

/** Read how to sign in, finish a sign-in the provider sent the browser back from, and restore the user.
 * `onChange` hears of later changes: a silent renewal, or a sign-in that ended. */
export async function startAccount(onChange: (user: User | null) => void): Promise<Account> {
  const config = await readConfig();
  if (!config.issuer || !config.clientId) return { config, user: null, justSignedIn: false };
  const home = `${window.location.origin}/`;
  manager = new UserManager({
    authority: config.issuer,
    client_id: config.clientId,
    redirect_uri: home,
    post_logout_redirect_uri: home,
    scope: config.scopes ?? 'openid profile email',
    automaticSilentRenew: true,
    userStore: new WebStorageStateStore({ store: window.localStorage }), // signed in across tabs and reloads
    extraQueryParams: config.audience ? { audience: config.audience } : {},
  });
  const users = manager;
  users.events.addUserLoaded((user) => {
    current = user;
    onChange(user);
  });
  users.events.addSilentRenewError(() => {
    void users.removeUser().then(() => {
      current = null;
      onChange(null);
    });
  });

  const query = new URLSearchParams(window.location.search);
  let justSignedIn = false;
  let error: string | undefined;
  if (query.has('state') && (query.has('code') || query.has('error'))) {
    try {
      const signedIn = await users.signinRedirectCallback();
      justSignedIn = true;
      window.history.replaceState(null, '', typeof signedIn.state === 'string' ? signedIn.state : home);
    } catch (failure) {
      error = `Signing in failed: ${(failure as Error).message}`;
      window.history.replaceState(null, '', home);
    }
  }
  current = await users.getUser();
  if (current?.expired) {
    current = await users.signinSilent().catch(() => users.removeUser().then(() => null));
  }
  return { config, user: current, justSignedIn, error };
}

/** Off to the provider's sign-in; the browser comes back to the conversation it left. */
export function signIn(): Promise<void> {
  return manager?.signinRedirect({ state: window.location.pathname + window.location.search }) ?? Promise.resolve();
}

/** Sign out here and at the provider; the page is then an anonymous visitor again. */
export async function signOut(): Promise<void> {
  if (!manager) return;
  const user = current;
  current = null;
  forgetAllDrafts(); // what was typed while signed in is not left for whoever uses this browser next
  await manager.removeUser();
  await manager.signoutRedirect({ id_token_hint: user?.id_token }).catch(() => window.location.assign('/'));
}
