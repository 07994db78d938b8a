// Copy to the clipboard, saying so for a moment: an answer's text, or a code block's.
import { useState } from 'react';

type Props = {
  text: string | (() => string); // a function when the text is read at the click (a code block's)
  label?: string;
  className?: string;
  testId?: string;
};

export function CopyButton({ text, label = 'Copy', className = 'icon-button', testId = 'copy-answer' }: Props) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard?.writeText(typeof text === 'string' ? text : text()).catch(() => undefined);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button type="button" className={className} data-testid={testId} onClick={() => void copy()}>
      {copied ? 'Copied' : label}
    </button>
  );
}
