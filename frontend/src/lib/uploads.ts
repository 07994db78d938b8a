// Files attached to a message: uploaded first (POST /api/files), with progress, then sent as `file` parts
// that name the upload's URL, which the server checks is the sender's.
import type { FileUIPart } from 'ai';
import { ApiError, type ErrorCode } from './api';
import type { components } from './api-schema';
import { bearer } from './auth';

export type Uploaded = components['schemas']['Uploaded'];

/** What the attach button offers; the server judges each file by its bytes and says why it refuses one. */
export const ACCEPTED = 'image/png,image/jpeg,image/webp,image/gif,application/pdf,text/plain,text/markdown,text/csv,application/json,.md,.csv,.json,.txt';

/** Upload one file; `onProgress` hears the share sent so far (0 to 1). XMLHttpRequest: fetch reports no upload progress. */
export function upload(file: File, onProgress: (share: number) => void): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `/api/files?filename=${encodeURIComponent(file.name)}`);
    request.setRequestHeader('content-type', file.type || 'application/octet-stream');
    const authorization = bearer();
    if (authorization) request.setRequestHeader('authorization', authorization);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      let body: { error?: { code?: ErrorCode; message?: string } } & Partial<Uploaded> = {};
      try {
        body = JSON.parse(request.responseText);
      } catch {
        // not JSON: the generic message below
      }
      if (request.status === 201) resolve(body as Uploaded);
      else reject(new ApiError(request.status, body.error?.code ?? 'HTTP_ERROR', body.error?.message ?? `The server answered ${request.status}.`));
    };
    request.onerror = () => reject(new Error('The server cannot be reached. Check your connection and try again.'));
    request.send(file);
  });
}

export function filePart(uploaded: Uploaded): FileUIPart {
  return { type: 'file', mediaType: uploaded.mediaType, filename: uploaded.filename, url: uploaded.url };
}
