// The AI SDK's own server: streamText with the mock model from `ai/test`, answered as a UI Message
// Stream by pipeUIMessageStreamToResponse. TOKENS tokens, DELAY_MS apart (0: as fast as it can).
import http from 'node:http';
import { convertToModelMessages, simulateReadableStream, streamText } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const TOKENS = Number(process.env.TOKENS ?? 200);
const DELAY_MS = Number(process.env.DELAY_MS ?? 0);
const chunks = [
  { type: 'stream-start', warnings: [] },
  { type: 'text-start', id: 'text-1' },
  ...Array.from({ length: TOKENS }, (_, n) => ({ type: 'text-delta', id: 'text-1', delta: ` ${n + 1}` })),
  { type: 'text-end', id: 'text-1' },
  { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' },
    usage: { inputTokens: { total: 5 }, outputTokens: { total: TOKENS } } },
];
// A model per answer, as a provider's client makes a request per call: the mock keeps every call it was given.
const model = () => new MockLanguageModelV4({
  doStream: async () => ({ stream: simulateReadableStream({ chunks, chunkDelayInMs: DELAY_MS || null }) }),
});

// The AI SDK's own Node path: the request's UI messages read and converted, the answer piped to the response.
http.createServer(async (request, response) => {
  if (request.url === '/health') return response.end('ok');
  let body = '';
  for await (const part of request) body += part;
  const { messages = [] } = JSON.parse(body || '{}');
  streamText({ model: model(), messages: await convertToModelMessages(messages) }).pipeUIMessageStreamToResponse(response);
}).listen(Number(process.env.PORT), '127.0.0.1');
