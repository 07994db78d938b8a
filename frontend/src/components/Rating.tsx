// Thumbs up / down under a finished answer, with an optional comment on a thumbs-down; pressing the
// chosen thumb again takes the rating back. The rating shown is the server's (it survives a reload).
import { useState } from 'react';
import { type Feedback, type Rating as Choice, clearRating, rateAnswer } from '../lib/api';

// A thumb drawn inline, so it shows wherever the page does (no emoji font needed); down is up turned over.
function Thumb({ down = false }: { down?: boolean }) {
  return (
    <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" className={down ? 'thumb-down' : undefined}>
      <path
        d="M7 10v11H4a1 1 0 0 1-1-1v-9a1 1 0 0 1 1-1h3zm0 0 4-8a3 3 0 0 1 3 3v4h5.5a2 2 0 0 1 2 2.3l-1.4 8A2 2 0 0 1 18.1 21H7"
        fill="none"
        stroke="currentColor"
        strokeWidth="2"
        strokeLinejoin="round"
      />
    </svg>
  );
}

export function Rating({ messageId, initial }: { messageId: string; initial?: Feedback }) {
  const [feedback, setFeedback] = useState<Feedback | undefined>(initial);
  const [commenting, setCommenting] = useState(false);
  const [comment, setComment] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function save(action: () => Promise<Feedback | undefined>) {
    setBusy(true);
    setError(null);
    try {
      setFeedback(await action());
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : 'The rating could not be saved.');
    } finally {
      setBusy(false);
    }
  }

  function press(choice: Choice) {
    if (feedback?.rating === choice) {
      setCommenting(false);
      return save(async () => {
        await clearRating(messageId);
        return undefined;
      });
    }
    setCommenting(choice === 'down');
    return save(() => rateAnswer(messageId, choice));
  }

  function sendComment(event: React.FormEvent) {
    event.preventDefault();
    setCommenting(false);
    return save(() => rateAnswer(messageId, 'down', comment.trim() || undefined));
  }

  return (
    <div className="rating" data-testid="rating">
      <button
        type="button"
        className="thumb"
        aria-label="Good answer"
        aria-pressed={feedback?.rating === 'up'}
        data-testid="thumb-up"
        disabled={busy}
        onClick={() => press('up')}
      >
        <Thumb />
      </button>
      <button
        type="button"
        className="thumb"
        aria-label="Bad answer"
        aria-pressed={feedback?.rating === 'down'}
        data-testid="thumb-down"
        disabled={busy}
        onClick={() => press('down')}
      >
        <Thumb down />
      </button>
      {feedback?.comment && !commenting && (
        <span className="rating-comment" data-testid="rating-comment">
          “{feedback.comment}”
        </span>
      )}
      {commenting && (
        <form className="rating-form" onSubmit={sendComment}>
          <label htmlFor={`comment-${messageId}`} className="visually-hidden">
            What was wrong with this answer? (optional)
          </label>
          <input
            id={`comment-${messageId}`}
            data-testid="rating-comment-input"
            maxLength={2000}
            placeholder="What was wrong? (optional)"
            value={comment}
            onChange={(event) => setComment(event.target.value)}
            autoFocus
          />
          <button type="submit" data-testid="rating-comment-send">
            Send
          </button>
        </form>
      )}
      {error && (
        <span className="rating-error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}
