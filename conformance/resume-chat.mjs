// The real `ai` Chat resuming an answer, as useChat({resume: true}) does after a reload: resumeStream()
// asks GET {api}/{id}/stream and reads the UI Message Stream it gets (204: nothing runs).
// Input (JSON on stdin): {baseUrl, cookie, conversationId}. Prints {messages, errors} as JSON.
import { chatOn, input } from './memory-chat.mjs';

const errors = [];
const chat = chatOn(await input(), errors);
await chat.resumeStream();
process.stdout.write(JSON.stringify({ messages: chat.messages, errors }));
