// The README's own `useChat` options, run by the real `ai` Chat: a message is sent, the page goes away
// mid-answer (its request is aborted, as a reload does), and a new Chat on the same conversation resumes as
// useChat({resume: true}) does after a reload.
// Input (JSON on stdin): {baseUrl, cookie, conversationId, options (the README's object literal), text}.
// Prints {shownBeforeReload, messages, errors} as JSON.
import { DefaultChatTransport } from 'ai';
import { Chat, input } from './memory-chat.mjs';

const { baseUrl, cookie, conversationId, options, text } = await input();
const realFetch = globalThis.fetch;
// The page's relative '/api/chat', from this visitor's browser.
globalThis.fetch = (url, init = {}) =>
  realFetch(new URL(String(url), baseUrl), { ...init, headers: { ...init.headers, cookie } });
const readmeOptions = () => new Function('DefaultChatTransport', 'conversationId', `return (${options});`)(
  DefaultChatTransport,
  conversationId,
);

const errors = [];
const page = new Chat({ ...readmeOptions(), onError: (error) => errors.push(error.message) });
const sent = page.sendMessage({ text });
const shown = () => page.lastMessage?.parts.find((part) => part.type === 'text')?.text ?? '';
while (page.lastMessage?.role !== 'assistant' || shown().length < 5) await new Promise((go) => setTimeout(go, 20));
const shownBeforeReload = shown();
await page.stop(); // the page goes away: its request is aborted
await sent;

const reloaded = new Chat({ ...readmeOptions(), onError: (error) => errors.push(error.message) });
await reloaded.resumeStream();
process.stdout.write(JSON.stringify({ shownBeforeReload, messages: reloaded.messages, errors }));
