// The empty conversation: example prompts (the model picker is above it, in the conversation's header).

const EXAMPLES = [
  'calculate (17 * 23) + 4',
  'What time is it in Asia/Tokyo?',
  'count to 20',
  'think about tide pools',
  'show me markdown',
];

type Props = { onSend: (text: string) => void };

export function Welcome({ onSend }: Props) {
  return (
    <div className="welcome">
      <h1>How can I help?</h1>
      <p className="muted">Ask anything, or start with one of these:</p>
      <ul className="examples" aria-label="Example prompts">
        {EXAMPLES.map((example) => (
          <li key={example}>
            <button type="button" className="chip" data-testid="example-prompt" onClick={() => onSend(example)}>
              {example}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
