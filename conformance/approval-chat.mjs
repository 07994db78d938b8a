// The real `ai` Chat (what useChat wraps) against a threadline server, through a tool approval: it sends a
// message, answers each `approval-requested` tool part with addToolApprovalResponse, and lets
// `lastAssistantMessageIsCompleteWithApprovalResponses` send the responses back, as the page does.
// Input (JSON on stdin): {baseUrl, cookie, conversationId, text, decisions: [{approved, reason?}, …]}, one
// decision per requested approval in order. Prints {requested, messages, errors} as JSON.
import { lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { input, pageChat } from './memory-chat.mjs';

const request = await input();
const { text, decisions } = request;

const errors = [];
const chat = pageChat(request, errors, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });

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
