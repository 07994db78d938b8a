// What went wrong with the last message, and Retry (waiting out a rate limit first).
import { ApiError, describeError } from '../lib/api';

type Props = {
  error: Error;
  waitLeft: number; // seconds a rate limit still asks for
  onRetry: (extra?: Record<string, string>) => void;
};

export function ErrorBanner({ error, waitLeft, onRetry }: Props) {
  const limited = error instanceof ApiError && error.status === 429;
  // Refused because an answer is still running here (another tab, say): stop it and send this one.
  const busyElsewhere = error instanceof ApiError && error.status === 409 && error.code === 'CONFLICT';
  return (
    <div className="banner error" role="alert">
      <span>{limited ? `Too many requests — try again in ${waitLeft} s.` : describeError(error)}</span>
      <button type="button" onClick={() => onRetry()} disabled={waitLeft > 0}>
        Retry
      </button>
      {busyElsewhere && (
        <button type="button" onClick={() => onRetry({ multitaskStrategy: 'interrupt' })}>
          Send anyway
        </button>
      )}
    </div>
  );
}
