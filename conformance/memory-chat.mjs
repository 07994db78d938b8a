// The real `ai` Chat (what useChat wraps, minus React), keeping its state in memory, for the scripts here.
import { AbstractChat } from 'ai';

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
