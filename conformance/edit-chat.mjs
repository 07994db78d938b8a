// The real `ai` Chat editing and regenerating, as useChat's sendMessage({ text, messageId }) and
// regenerate() do: two messages, the second edited, its answer regenerated, then the conversation read
// back from the server and checked with the package's own validateUIMessages.
// Input (JSON on stdin): {baseUrl, cookie, conversationId}. Prints {messages, history, valid, errors} as JSON.
import { chatOn, input, readBack } from './memory-chat.mjs';

const given = await input();
const errors = [];
const chat = chatOn(given, errors);
await chat.sendMessage({ text: 'one' });
await chat.sendMessage({ text: 'two' });
const second = chat.messages.filter((message) => message.role === 'user')[1];
await chat.sendMessage({ text: 'two, edited', messageId: second.id });
await chat.regenerate();
const { history, valid } = await readBack(given);
process.stdout.write(JSON.stringify({ messages: chat.messages, history, valid, errors }));
