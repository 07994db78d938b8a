// The AI SDK's own server: streamText with the mock model from `ai/test`, answered as a UI Message
// Stream by toUIMessageStreamResponse. TOKENS tokens, DELAY_MS apart (0: as fast as it can).
import http from 'node:http';
import { simulateReadableStream, streamText } from 'ai';
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
const model = new MockLanguageModelV4({
  doStream: async () => ({ stream: simulateReadableStream({ chunks, chunkDelayInMs: DELAY_MS || null }) }),
});

http.createServer(async (request, response) => {
  if (request.url === '/health') return response.end('ok');
  for await (const _ of request); // read the body, as a real handler would
  const answer = streamText({ model, prompt: 'count' }).toUIMessageStreamResponse();
  response.writeHead(answer.status, Object.fromEntries(answer.headers));
  for await (const chunk of answer.body) response.write(chunk);
  response.end();
}).listen(Number(process.env.PORT), '127.0.0.1');
