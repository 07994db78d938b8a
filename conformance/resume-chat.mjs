// The real `ai` Chat resuming an answer, as useChat({resume: true}) does after a reload: resumeStream()
// asks GET {api}/{id}/stream and reads the UI Message Stream it gets (204: nothing runs).
// Input (JSON on stdin): {baseUrl, cookie, conversationId}. Prints {messages, errors} as JSON.
import { DefaultChatTransport } from 'ai';
import { Chat } from './memory-chat.mjs';

let input = '';
for await (const data of process.stdin) input += data;
const { baseUrl, cookie, conversationId } = JSON.parse(input);
const errors = [];
const chat = new Chat({
  id: conversationId,
  transport: new DefaultChatTransport({ api: `${baseUrl}/api/chat`, headers: { cookie } }),
  onError: (error) => errors.push(error.message),
});
await chat.resumeStream();
process.stdout.write(JSON.stringify({ messages: chat.messages, errors }));
