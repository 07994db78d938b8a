// The real `ai` Chat (what useChat wraps) against a threadline server, through a tool approval: it sends a
// message, answers each `approval-requested` tool part with addToolApprovalResponse, and lets
// `lastAssistantMessageIsCompleteWithApprovalResponses` send the responses back, as the page does.
// Input (JSON on stdin): {baseUrl, cookie, conversationId, text, decisions: [{approved, reason?}, …]}, one
// decision per requested approval in order. Prints {requested, messages, errors} as JSON.
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { Chat } from './memory-chat.mjs';

let input = '';
for await (const data of process.stdin) input += data;
const { baseUrl, cookie, conversationId, text, decisions } = JSON.parse(input);

const errors = [];
const chat = new Chat({
  id: conversationId,
  transport: new DefaultChatTransport({
    api: `${baseUrl}/api/chat`,
    headers: { cookie },
    // As the page does: only the newest message goes; the server keeps the history.
    prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
      body: { id, messages: messages.slice(-1), trigger, messageId },
    }),
  }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  onError: (error) => errors.push(error.message),
});

const settled = async () => {
  for (let waited = 0; waited < 20_000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (chat.status === 'ready' || chat.status === 'error') return;
  }
  throw new Error(`the chat never settled (${chat.status})`);
};

await chat.sendMessage({ text });
await settled();
const requested = chat.messages
  .at(-1)
  .parts.filter((part) => part.state === 'approval-requested')
  .map((part) => ({ toolCallId: part.toolCallId, approvalId: part.approval.id }));
for (const [index, request] of requested.entries()) {
  const decision = decisions[index] ?? { approved: false };
  await chat.addToolApprovalResponse({ id: request.approvalId, ...decision });
}
await new Promise((resolve) => setTimeout(resolve, 50)); // the automatic send starts
await settled();
process.stdout.write(JSON.stringify({ requested, messages: chat.messages, errors }));
