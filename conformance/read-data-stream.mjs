// Reads an AI SDK 4 data stream (bytes on stdin) with the real ai@4 client code: every line through
// parseDataStreamPart, then callChatApi, the function ai@4's useChat calls, which builds the assistant
// message. Prints the part codes, the message, the finish reason and any error as JSON; exits 1 when
// a line is rejected or the stream cannot be applied.
import { callChatApi, parseDataStreamPart } from '@ai-sdk/ui-utils';

const chunks = [];
for await (const data of process.stdin) chunks.push(data);
const bytes = Buffer.concat(chunks);

const codes = [];
for (const line of bytes.toString('utf8').split('\n')) {
  if (!line) continue;
  try {
    codes.push(parseDataStreamPart(line).type);
  } catch (error) {
    process.stderr.write(`rejected line ${JSON.stringify(line)}: ${error.message}\n`);
    process.exit(1);
  }
}

let message;
let finish;
let error = null;
try {
  await callChatApi({
    api: 'http://threadline.invalid/api/chat',
    body: { id: 'conformance', messages: [] },
    streamProtocol: 'data',
    restoreMessagesOnFailure: () => {},
    onResponse: undefined,
    onUpdate: ({ message: snapshot }) => { message = structuredClone(snapshot); },
    onFinish: (final, details) => { message = final; finish = details; },
    onToolCall: undefined,
    generateId: () => 'generated',
    fetch: async () => new Response(bytes, { status: 200 }),
    lastMessage: undefined,
  });
} catch (thrown) {
  error = thrown.message; // ai@4 throws on a `3:` error part, as its useChat does
}
process.stdout.write(JSON.stringify({ codes, message, finish, error }));
