// The empty conversation: the prompts its profile offers (the model picker is above it, in the header).

type Props = { starters: string[]; onSend: (text: string) => void };

export function Welcome({ starters, onSend }: Props) {
  return (
    <div className="welcome">
      <h1>How can I help?</h1>
      <p className="muted">{starters.length ? 'Ask anything, or start with one of these:' : 'Ask anything.'}</p>
      {starters.length > 0 && (
        <ul className="examples" aria-label="Example prompts">
          {starters.map((starter) => (
            <li key={starter}>
              <button type="button" className="chip" data-testid="example-prompt" onClick={() => onSend(starter)}>
                {starter}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
