// Under the last answer: its suggested replies as chips (a click sends one) and its actions as buttons.
import type { SuggestedAction, Suggestions as SuggestionsData } from '../lib/api';

type Props = {
  suggestions: SuggestionsData;
  onReply: (value: string) => void;
  onAction: (action: SuggestedAction) => void;
};

export function Suggestions({ suggestions, onReply, onAction }: Props) {
  if (suggestions.values.length === 0 && suggestions.actions.length === 0) return null;
  return (
    <div className="suggestions" data-testid="suggestions">
      {suggestions.values.length > 0 && (
        <ul className="chips" aria-label="Suggested replies">
          {suggestions.values.map((value) => (
            <li key={value.label}>
              <button type="button" className="chip" data-testid="suggested-value" title={value.value} onClick={() => onReply(value.value)}>
                {value.label}
              </button>
            </li>
          ))}
        </ul>
      )}
      {suggestions.actions.length > 0 && (
        <div className="actions" role="group" aria-label="Suggested actions">
          {suggestions.actions.map((action) => (
            <button
              key={`${action.action}-${action.label}`}
              type="button"
              className={`action action-${action.style}`}
              data-testid="suggested-action"
              data-action={action.action}
              onClick={() => onAction(action)}
            >
              {action.label}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
