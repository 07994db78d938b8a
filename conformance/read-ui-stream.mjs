// Reads a UI Message Stream (SSE bytes on stdin) with the real `ai` client code, the way useChat does:
// parseJsonEventStream + uiMessageChunkSchema, then readUIMessageStream. Like useChat, an `error` chunk
// ends the answer. Prints the chunk types, the reassembled assistant message and the error chunks' texts
// as JSON; exits 1 on the first chunk the client rejects or cannot apply.
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from 'ai';

const input = new ReadableStream({
  async start(controller) {
    for await (const data of process.stdin) controller.enqueue(new Uint8Array(data));
    controller.close();
  },
});

const chunkTypes = [];
const errors = [];
const chunks = parseJsonEventStream({ stream: input, schema: uiMessageChunkSchema }).pipeThrough(
  new TransformStream({
    transform(result, controller) {
      if (!result.success) throw new Error(`rejected chunk: ${JSON.stringify(result.rawValue)}`);
      chunkTypes.push(result.value.type);
      if (result.value.type === 'error') errors.push(result.value.errorText);
      controller.enqueue(result.value);
    },
  }),
);

let message;
try {
  for await (const snapshot of readUIMessageStream({ stream: chunks, terminateOnError: true })) {
    message = snapshot;
  }
} catch (error) {
  if (!errors.includes(error.message)) {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  }
}
process.stdout.write(JSON.stringify({ chunkTypes, message, errors }));
