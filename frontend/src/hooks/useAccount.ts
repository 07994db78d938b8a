// Who is asking, known first: every request after this one carries the signed-in user's token; just after
// signing in, how many anonymous conversations there are to offer.
import type { User } from 'oidc-client-ts';
import { useEffect, useState } from 'react';
import { anonymousConversations } from '../lib/api';
import { type Account, startAccount } from '../lib/auth';

export function useAccount() {
  const [account, setAccount] = useState<Account | null>(null); // null until the sign-in state is known
  const [user, setUser] = useState<User | null>(null);
  const [claimable, setClaimable] = useState(0); // anonymous conversations to offer, just after signing in

  useEffect(() => {
    startAccount(setUser).then(async (started) => {
      setUser(started.user);
      if (started.justSignedIn && started.user) setClaimable(await anonymousConversations());
      setAccount(started);
    });
  }, []);

  return { account, user, claimable, setClaimable };
}
