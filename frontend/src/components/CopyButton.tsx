// Copy to the clipboard, saying so for a moment: an answer's text, or a code block's.
import { useState } from 'react';
import { copyText } from '../lib/clipboard';

type Props = {
  text: string | (() => string); // a function when the text is read at the click (a code block's)
  label?: string;
  className?: string;
  testId?: string;
};

export function CopyButton({ text, label = 'Copy', className = 'icon-button', testId = 'copy-answer' }: Props) {
  const [said, setSaid] = useState<string | null>(null); // what the last click did, for a moment
  const copy = async () => {
    const copied = await copyText((typeof text === 'string' ? text : text()).trim());
    setSaid(copied ? 'Copied' : 'Could not copy');
    setTimeout(() => setSaid(null), 1500);
  };
  return (
    <button type="button" className={className} data-testid={testId} onClick={() => void copy()}>
      {said ?? label}
    </button>
  );
}
