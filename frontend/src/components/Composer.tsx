// The message box: grows with its text, Enter sends, Shift+Enter starts a new line.
import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from 'react';

const HINT = 'Message threadline (Enter to send, Shift+Enter for a new line)';
const narrow = () => window.matchMedia?.('(max-width: 720px)').matches; // a phone: the short placeholder fits

type Props = {
  busy: boolean;
  locked?: string; // why nothing can be sent now (an A/B comparison waits for a vote)
  onSend: (text: string) => void;
  onStop: () => void;
};

export function Composer({ busy, locked, onSend, onStop }: Props) {
  const [text, setText] = useState('');
  const box = useRef<HTMLTextAreaElement>(null);
  const empty = text.trim() === '';

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    element.style.height = 'auto';
    element.style.height = `${Math.min(element.scrollHeight, 240)}px`;
  }, [text]);

  useEffect(() => {
    if (!busy) box.current?.focus();
  }, [busy]);

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    if (busy || locked || empty) return;
    onSend(text.trim());
    setText('');
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      submit();
    }
  };

  return (
    <form className="composer" onSubmit={submit}>
      <label htmlFor="message" className="visually-hidden">
        Message
      </label>
      <textarea
        id="message"
        ref={box}
        rows={1}
        value={text}
        disabled={busy || Boolean(locked)}
        placeholder={busy ? 'Answering…' : (locked ?? (narrow() ? 'Message threadline' : HINT))}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      {busy ? (
        <button type="button" className="stop" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="send" disabled={empty || Boolean(locked)}>
          Send
        </button>
      )}
    </form>
  );
}
