// Attached files: the composer's before sending (a preview, upload progress, why one was refused, a way to
// remove it) and a sent message's (an image's thumbnail or a file's name; a click opens it).
import { useEffect, useState } from 'react';
import type { FileUIPart } from 'ai';
import { apiFetch, bearer } from '../lib/auth';
import type { Uploaded } from '../lib/uploads';

/** A paper clip, drawn: an emoji needs a font the machine may not have. */
export function ClipIcon() {
  return (
    <svg width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
      <path d="M21 11.5l-8.5 8.5a5 5 0 01-7-7l9-9a3.5 3.5 0 015 5l-9 9a2 2 0 01-3-3l8.5-8.5" strokeLinecap="round" />
    </svg>
  );
}

function DocumentIcon() {
  return (
    <svg className="file-icon" width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
      <path d="M14 3H6a1 1 0 00-1 1v16a1 1 0 001 1h12a1 1 0 001-1V8z M14 3v5h5" strokeLinejoin="round" />
    </svg>
  );
}

export type Pending = {
  key: string;
  file: File;
  preview?: string; // an object URL, for images
  progress: number; // 0 to 1
  uploaded?: Uploaded;
  error?: string;
};

export function PendingFiles({ files, onRemove }: { files: Pending[]; onRemove: (key: string) => void }) {
  if (files.length === 0) return null;
  return (
    <ul className="attachments pending" aria-label="Files to send">
      {files.map((pending) => (
        <li key={pending.key} className={pending.error ? 'refused' : undefined} data-testid="pending-file">
          {pending.preview && !pending.error ? <img src={pending.preview} alt="" /> : <DocumentIcon />}
          <span className="file-name" title={pending.file.name}>
            {pending.file.name}
          </span>
          {pending.error ? (
            <span className="file-error" role="alert">
              {pending.error}
            </span>
          ) : (
            !pending.uploaded && (
              <progress
                value={pending.progress}
                max={1}
                aria-label={`Uploading ${pending.file.name}`}
              />
            )
          )}
          <button type="button" className="remove" aria-label={`Remove ${pending.file.name}`} onClick={() => onRemove(pending.key)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

/** A stored file's address for the page: as it is, or, for a signed-in user (whose token an <img> cannot
 * send), fetched with the token into an object URL. */
function useFileUrl(url: string): string | undefined {
  const fetched = Boolean(bearer()) && url.startsWith('/api/files/');
  const [objectUrl, setObjectUrl] = useState<string>();
  useEffect(() => {
    if (!fetched) return;
    let made: string | undefined;
    let cancelled = false;
    apiFetch(url)
      .then((response) => (response.ok ? response.blob() : Promise.reject(new Error(String(response.status)))))
      .then((blob) => {
        if (cancelled) return;
        made = URL.createObjectURL(blob);
        setObjectUrl(made);
      })
      .catch(() => undefined); // shown as a link that names the file: nothing more to say
    return () => {
      cancelled = true;
      if (made) URL.revokeObjectURL(made);
    };
  }, [fetched, url]);
  return fetched ? objectUrl : url;
}

export function FileView({ part }: { part: FileUIPart }) {
  const url = useFileUrl(part.url);
  const name = part.filename ?? 'attachment';
  if (part.mediaType.startsWith('image/')) {
    return (
      <a className="file-thumb" href={url} target="_blank" rel="noopener noreferrer" data-testid="file-part" title={`Open ${name}`}>
        {url && <img src={url} alt={name} />}
      </a>
    );
  }
  return (
    <a className="file-chip" href={url} target="_blank" rel="noopener noreferrer" download={name} data-testid="file-part">
      <DocumentIcon /> {name}
    </a>
  );
}
