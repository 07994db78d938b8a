// Reads a UI Message Stream (SSE bytes on stdin) with the real `ai` client code, the way useChat does:
// parseJsonEventStream + uiMessageChunkSchema, then readUIMessageStream. Prints the chunk types, the
// reassembled assistant message and any error chunks as JSON; exits 1 on the first chunk the client rejects.
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
      controller.enqueue(result.value);
    },
  }),
);

try {
  let message;
  for await (const snapshot of readUIMessageStream({
    stream: chunks,
    terminateOnError: true,
    onError: (error) => errors.push(error.message),
  })) {
    message = snapshot;
  }
  process.stdout.write(JSON.stringify({ chunkTypes, message, errors }));
} catch (error) {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
}
