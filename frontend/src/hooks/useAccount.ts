// Who is asking, known first: every request after this one carries the signed-in user's token; signed in, how many
// anonymous conversations there are to offer, until the offer is answered: a reload before answering it offers them
// again (else the account went on under the anonymous conversation's id, and a later Keep found nothing to keep).
import type { User } from 'oidc-client-ts';
import { useEffect, useState } from 'react';
import { anonymousConversations } from '../lib/api';
import { type Account, startAccount } from '../lib/auth';

export function useAccount() {
  const [account, setAccount] = useState<Account | null>(null); // null until the sign-in state is known
  const [user, setUser] = useState<User | null>(null);
  const [claimable, setClaimable] = useState(0); // anonymous conversations to offer, just after signing in
  const [earlier, setEarlier] = useState(0); // ... and those a "Not now" left, which the account bar offers again

  useEffect(() => {
    startAccount(setUser).then(async (started) => {
      setUser(started.user);
      const user = started.user;
      if (user) {
        const count = await anonymousConversations();
        if (started.justSignedIn || !offerAnswered(user)) setClaimable(count);
        else setEarlier(count);
      }
      setAccount(started);
    });
  }, []);

  return { account, user, claimable, setClaimable, earlier, setEarlier };
}

const ANSWERED = 'threadline:claim-offer-answered'; // the user who answered the keep offer in this tab

function offerAnswered(user: User): boolean {
  return sessionStorage.getItem(ANSWERED) === user.profile.sub;
}

/** The keep offer was answered (kept, or not now): this tab does not ask this user again. */
export function answerOffer(user: User | null): void {
  if (user) sessionStorage.setItem(ANSWERED, user.profile.sub);
}
