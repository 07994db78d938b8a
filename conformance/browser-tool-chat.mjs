// The real `ai` Chat (what useChat wraps) against a threadline server with a browser tool, as a page declares one:
// the chat body carries the tools (prepareSendMessagesRequest), `onToolCall` runs a call with `addToolOutput`, and
// `lastAssistantMessageIsCompleteWithToolCalls` sends the answered message back, so the agent goes on.
// Input (JSON on stdin): {baseUrl, cookie, conversationId, text, tools: [{name, description, parameters}],
// outputs: {toolName: output}, errors?: {toolName: errorText}}. Prints {calls, messages, history, valid, errors}.
import { lastAssistantMessageIsCompleteWithToolCalls } from 'ai';
import { input, pageChat, readBack } from './memory-chat.mjs';

const request = await input();
const { text, tools, outputs } = request;
const failures = request.errors ?? {};

const errors = [];
const calls = [];
const chat = pageChat(request, errors, {
  body: { tools }, // the page's own tools, with every request
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
  onToolCall: ({ toolCall }) => {
    calls.push(toolCall);
    // Not awaited, as the AI SDK's docs advise: addToolOutput inside onToolCall would wait on itself.
    if (toolCall.toolName in failures) {
      chat.addToolOutput({
        state: 'output-error',
        tool: toolCall.toolName,
        toolCallId: toolCall.toolCallId,
        errorText: failures[toolCall.toolName],
      });
    } else if (toolCall.toolName in outputs) {
      chat.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: outputs[toolCall.toolName] });
    }
  },
});

const settled = async () => {
  for (let waited = 0; waited < 20_000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if ((chat.status === 'ready' || chat.status === 'error') && !chat.lastMessage?.parts.some(waiting)) return;
  }
  throw new Error(`the chat never settled (${chat.status})`);
};
// A call of a browser tool the page answers is still open until its output goes back and the answer goes on.
const waiting = (part) => part.state === 'input-available' && part.type.slice(5) in { ...outputs, ...failures };

await chat.sendMessage({ text });
await settled();
await new Promise((resolve) => setTimeout(resolve, 100)); // an automatic send after the last output has started
await settled();
const { history, valid } = await readBack(request);
process.stdout.write(JSON.stringify({ calls, messages: chat.messages, history, valid, errors }));
