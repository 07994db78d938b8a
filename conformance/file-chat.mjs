// The real `ai` Chat sending a message with files, as useChat's sendMessage({ text, files }) does, then the
// conversation read back from the server and checked with the package's own validateUIMessages.
// Input (JSON on stdin): {baseUrl, cookie, conversationId, text, files: [FileUIPart]}.
// Prints {messages, history, valid, errors} as JSON.
import { chatOn, input, readBack } from './memory-chat.mjs';

const given = await input();
const errors = [];
const chat = chatOn(given, errors);
await chat.sendMessage({ text: given.text, files: given.files });
const { history, valid } = await readBack(given);
process.stdout.write(JSON.stringify({ messages: chat.messages, history, valid, errors }));
