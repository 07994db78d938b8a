// The real `ai` Chat (what useChat wraps, minus React), keeping its state in memory, for the scripts here.
import { AbstractChat, DefaultChatTransport, validateUIMessages } from 'ai';

class MemoryState {
  status = 'ready';
  error = undefined;
  messages = [];
  pushMessage = (message) => this.messages.push(message);
  popMessage = () => this.messages.pop();
  replaceMessage = (index, message) => (this.messages[index] = message);
  snapshot = (thing) => structuredClone(thing);
}

export class Chat extends AbstractChat {
  constructor(options) {
    super({ ...options, state: new MemoryState() });
  }
}

/** What a script was given: JSON on stdin. */
export async function input() {
  let text = '';
  for await (const data of process.stdin) text += data;
  return JSON.parse(text);
}

/** A Chat on a server's /api/chat as one visitor (their cookie); its errors are pushed onto `errors`. */
export function chatOn({ baseUrl, cookie, conversationId }, errors) {
  return new Chat({
    id: conversationId,
    transport: new DefaultChatTransport({ api: `${baseUrl}/api/chat`, headers: { cookie } }),
    onError: (error) => errors.push(error.message),
  });
}

/** A Chat as the page makes one: only the newest message goes (the server keeps the history), `body` beside it;
 * `options` are the Chat's own (sendAutomaticallyWhen, onToolCall, …). */
export function pageChat({ baseUrl, cookie, conversationId }, errors, { body = {}, ...options } = {}) {
  return new Chat({
    id: conversationId,
    transport: new DefaultChatTransport({
      api: `${baseUrl}/api/chat`,
      headers: { cookie },
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
        body: { id, messages: messages.slice(-1), trigger, messageId, ...body },
      }),
    }),
    onError: (error) => errors.push(error.message),
    ...options,
  });
}

/** The conversation as the server gives it back, and whether the package's validateUIMessages accepts it
 * (true, or why not). */
export async function readBack({ baseUrl, cookie, conversationId }) {
  const response = await fetch(`${baseUrl}/api/conversations/${conversationId}`, { headers: { cookie } });
  const history = (await response.json()).messages;
  try {
    await validateUIMessages({ messages: history });
    return { history, valid: true };
  } catch (error) {
    return { history, valid: error.message };
  }
}
