// A shared conversation (/share/{id}): read-only, as it was when shared; no composer, no ratings, no sidebar.
import { useEffect, useState } from 'react';
import { describeError, loadShared, type Shared } from '../lib/api';
import { Message } from './Message';

const NONE = {};

export function SharedConversation({ shareId }: { shareId: string }) {
  const [shared, setShared] = useState<Shared | null | undefined>(undefined); // undefined: loading
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    loadShared(shareId).then(setShared, (failure: Error) => setError(describeError(failure)));
  }, [shareId]);

  useEffect(() => {
    document.title = shared ? `${shared.title} · threadline` : 'threadline';
  }, [shared]);

  return (
    <main className="shared" data-testid="shared-conversation">
      <header className="shared-header">
        <a className="brand" href="/">
          threadline
        </a>
        <a className="new-chat" href="/">
          Start your own chat
        </a>
      </header>
      {error && (
        <div className="banner" role="alert">
          {error}
        </div>
      )}
      {shared === null && (
        <div className="welcome">
          <h1>This link does not work</h1>
          <p className="muted">It was never made, or its owner stopped sharing the conversation.</p>
        </div>
      )}
      {shared && (
        <>
          <h1 className="shared-title">{shared.title}</h1>
          <p className="muted shared-note">
            Shared {new Date(shared.sharedAt).toLocaleDateString([], { dateStyle: 'long' })} · read-only
          </p>
          <div className="messages shared-messages" role="log">
            {shared.messages.map((message) => (
              <Message
                key={message.id}
                message={message}
                progress={NONE}
                stopped={false}
                failed={false}
                streaming={false}
                rateable={false}
              />
            ))}
          </div>
        </>
      )}
    </main>
  );
}
