// The message box: grows with its text, Enter sends, Shift+Enter starts a new line. While an answer streams
// the next message can be written (and its files attached); only sending waits. Files join the message
// through the attach button, a paste or a drop; each uploads at once, and the message waits for them.
import { type ClipboardEvent, type DragEvent, type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from 'react';
import type { FileUIPart } from 'ai';
import { describeError } from '../lib/api';
import { loadDraft, saveDraft } from '../lib/drafts';
import { ACCEPTED, filePart, upload } from '../lib/uploads';
import { ClipIcon, type Pending, PendingFiles } from './Attachments';

const HINT = 'Message threadline (Enter to send, Shift+Enter for a new line)';
const narrow = () => window.matchMedia?.('(max-width: 720px)').matches; // a phone: the short placeholder fits

type Props = {
  conversationId: string; // whose draft the box keeps
  busy: boolean;
  locked?: string; // why nothing can be sent now (an A/B comparison waits for a vote)
  onSend: (text: string, files: FileUIPart[]) => void;
  onStop: () => void;
};

let added = 0; // keys for attached files

/** Files of a kept draft, already uploaded: shown as attached again. */
const restored = (files: FileUIPart[]): Pending[] =>
  files.map((part) => {
    const filename = part.filename ?? 'attachment';
    const id = part.url.split('/').at(-1) ?? '';
    const uploaded = { id, url: part.url, mediaType: part.mediaType, filename, size: 0 };
    const preview = part.mediaType.startsWith('image/') ? part.url : undefined;
    return { key: `file-${(added += 1)}`, file: new File([], filename, { type: part.mediaType }), preview, progress: 1, uploaded };
  });

export function Composer({ conversationId, busy, locked, onSend, onStop }: Props) {
  const [text, setText] = useState(() => loadDraft(conversationId).text);
  const [pending, setPending] = useState<Pending[]>(() => restored(loadDraft(conversationId).files));
  const [dragging, setDragging] = useState(false);
  const box = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  const uploading = pending.some((file) => !file.uploaded && !file.error);
  const refused = pending.some((file) => file.error);
  const empty = text.trim() === '' && !pending.some((file) => file.uploaded);

  const change = (key: string, update: Partial<Pending>) =>
    setPending((files) => files.map((file) => (file.key === key ? { ...file, ...update } : file)));

  const attach = (files: FileList | File[]) => {
    for (const file of Array.from(files)) {
      const key = `file-${(added += 1)}`;
      const preview = file.type.startsWith('image/') ? URL.createObjectURL(file) : undefined;
      setPending((list) => [...list, { key, file, preview, progress: 0 }]);
      upload(file, (progress) => change(key, { progress })).then(
        (uploaded) => change(key, { uploaded, progress: 1 }),
        (error: Error) => change(key, { error: describeError(error) }),
      );
    }
  };

  const remove = (key: string) =>
    setPending((files) => {
      const gone = files.find((file) => file.key === key);
      if (gone?.preview?.startsWith('blob:')) URL.revokeObjectURL(gone.preview);
      return files.filter((file) => file.key !== key);
    });

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    element.style.height = 'auto';
    element.style.height = `${Math.min(element.scrollHeight, 240)}px`;
  }, [text]);

  // Once an answer ends, the box takes the focus back only from nowhere (or itself): never from the search
  // box or another control the person moved to, and never on a touch screen, where it raises the keyboard.
  useEffect(() => {
    if (busy || window.matchMedia?.('(pointer: coarse)').matches) return;
    const focused = document.activeElement;
    if (!focused || focused === document.body || focused === box.current) box.current?.focus();
  }, [busy]);

  // The draft outlives a reload and a switch to another conversation.
  useEffect(() => {
    const files = pending.flatMap((file) => (file.uploaded ? [filePart(file.uploaded)] : []));
    saveDraft(conversationId, { text, files });
  }, [conversationId, text, pending]);

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    if (busy || locked || empty || uploading || refused) return;
    onSend(text.trim(), pending.flatMap((file) => (file.uploaded ? [filePart(file.uploaded)] : [])));
    setText('');
    for (const file of pending) if (file.preview?.startsWith('blob:')) URL.revokeObjectURL(file.preview);
    setPending([]);
  };

  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    if (event.clipboardData.files.length === 0) return; // text pastes as text
    event.preventDefault();
    attach(event.clipboardData.files);
  };

  const onDrop = (event: DragEvent<HTMLFormElement>) => {
    event.preventDefault();
    setDragging(false);
    if (!locked) attach(event.dataTransfer.files);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      submit();
    }
  };

  return (
    <form
      className={dragging ? 'composer dragging' : 'composer'}
      onSubmit={submit}
      onDragOver={(event) => {
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      <PendingFiles files={pending} onRemove={remove} />
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        accept={ACCEPTED}
        data-testid="file-input"
        onChange={(event) => {
          if (event.target.files) attach(event.target.files);
          event.target.value = ''; // the same file may be picked again
        }}
      />
      <button
        type="button"
        className="attach"
        aria-label="Attach files"
        title="Attach files (or paste or drop them)"
        disabled={Boolean(locked)}
        onClick={() => picker.current?.click()}
      >
        <ClipIcon />
      </button>
      <label htmlFor="message" className="visually-hidden">
        Message
      </label>
      <textarea
        id="message"
        ref={box}
        rows={1}
        value={text}
        disabled={Boolean(locked)}
        placeholder={locked ?? (narrow() ? 'Message threadline' : HINT)}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
        onPaste={onPaste}
      />
      {/* Keyed: React must not turn the clicked Stop into Send, whose default action would send the draft. */}
      {busy ? (
        <button key="stop" type="button" className="stop" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button key="send" type="submit" className="send" disabled={empty || uploading || refused || Boolean(locked)}>
          Send
        </button>
      )}
    </form>
  );
}
