// The real `ai` Chat editing and regenerating, as useChat's sendMessage({ text, messageId }) and
// regenerate() do: two messages, the second edited, its answer regenerated, then the conversation read
// back from the server and checked with the package's own validateUIMessages.
// Input (JSON on stdin): {baseUrl, cookie, conversationId}. Prints {messages, history, valid, errors} as JSON.
import { DefaultChatTransport, validateUIMessages } from 'ai';
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
await chat.sendMessage({ text: 'one' });
await chat.sendMessage({ text: 'two' });
const second = chat.messages.filter((message) => message.role === 'user')[1];
await chat.sendMessage({ text: 'two, edited', messageId: second.id });
await chat.regenerate();
const response = await fetch(`${baseUrl}/api/conversations/${conversationId}`, { headers: { cookie } });
const history = (await response.json()).messages;
let valid = true;
try {
  await validateUIMessages({ messages: history });
} catch (error) {
  valid = error.message;
}
process.stdout.write(JSON.stringify({ messages: chat.messages, history, valid, errors }));
