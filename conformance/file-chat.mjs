// The real `ai` Chat sending a message with files, as useChat's sendMessage({ text, files }) does, then the
// conversation read back from the server and checked with the package's own validateUIMessages.
// Input (JSON on stdin): {baseUrl, cookie, conversationId, text, files: [FileUIPart]}.
// Prints {messages, history, valid, errors} as JSON.
import { DefaultChatTransport, validateUIMessages } from 'ai';
import { Chat } from './memory-chat.mjs';

let input = '';
for await (const data of process.stdin) input += data;
const { baseUrl, cookie, conversationId, text, files } = JSON.parse(input);
const errors = [];
const chat = new Chat({
  id: conversationId,
  transport: new DefaultChatTransport({ api: `${baseUrl}/api/chat`, headers: { cookie } }),
  onError: (error) => errors.push(error.message),
});
await chat.sendMessage({ text, files });
const response = await fetch(`${baseUrl}/api/conversations/${conversationId}`, { headers: { cookie } });
const history = (await response.json()).messages;
let valid = true;
try {
  await validateUIMessages({ messages: history });
} catch (error) {
  valid = error.message;
}
process.stdout.write(JSON.stringify({ messages: chat.messages, history, valid, errors }));
