// Seed 004's own client, `streamChatResponse` from its "Client Implementation" section, transcribed
// from TypeScript to JavaScript (types removed; its ChatApiError also keeps the status and Retry-After
// so tests can check them), run against a threadline server. A browser would send the visitor's cookie with the same-origin fetch;
// here the harness adds it. Input (JSON on stdin): {baseUrl, cookie, message, conversationId?,
// abortAfterDeltas?}. Prints {events} or {status, body} (a ChatApiError) as JSON.

class ChatApiError extends Error {
  constructor(error) {
    super(error?.error?.message ?? 'request failed');
    this.body = error;
  }
}

async function* streamChatResponse(message, conversationId, signal) {
  const response = await fetch('/api/chat/stream', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ message, conversationId }),
    signal,
  });

  if (!response.ok) {
    const error = await response.json();
    const failure = new ChatApiError(error);
    failure.status = response.status;
    failure.retryAfter = response.headers.get('retry-after');
    throw failure;
  }

  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';

  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;

      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split('\n\n');
      buffer = lines.pop() || '';

      for (const line of lines) {
        if (line.startsWith('data: ')) {
          const event = JSON.parse(line.slice(6));
          yield event;
        }
      }
    }
  } finally {
    reader.releaseLock();
  }
}

let input = '';
for await (const data of process.stdin) input += data;
const { baseUrl, cookie, message, conversationId, abortAfterDeltas } = JSON.parse(input);

const browserFetch = globalThis.fetch;
globalThis.fetch = (path, init) =>
  browserFetch(new URL(path, baseUrl), { ...init, headers: { ...init.headers, Cookie: cookie } });

const controller = new AbortController();
const events = [];
try {
  let deltas = 0;
  for await (const event of streamChatResponse(message, conversationId, controller.signal)) {
    events.push(event);
    if (event.type === 'text_delta' && ++deltas === abortAfterDeltas) controller.abort();
  }
  console.log(JSON.stringify({ events }));
} catch (error) {
  if (error instanceof ChatApiError) {
    console.log(JSON.stringify({ status: error.status, retryAfter: error.retryAfter, body: error.body }));
  } else if (error.name === 'AbortError') {
    console.log(JSON.stringify({ events, aborted: true }));
  } else {
    throw error;
  }
}
