// Runs an AG-UI agent against threadline's POST /api/ag-ui with the real @ag-ui/client HttpAgent (its event
// verifier included), as a frontend does. Reads {baseUrl, cookie, threadId, runs: [{text?, fresh?, forwardedProps?,
// resolve?, cancel?, tools?, outputs?}]} on stdin: a run with `text` adds that user message; `resolve` answers every
// interrupt the last run ended with (its value the payload), `cancel` declines them; `fresh` starts from a new
// HttpAgent that knows only the new message (a reloaded page); `tools` are the run's browser tools, and `outputs`
// ({toolName: content}) answer the calls of them the last run left pending, as tool messages. Prints, per run, the
// event types, the events, the pending tool calls, the agent's messages after it, and the client's error, if any.
import { HttpAgent } from '@ag-ui/client';

let input = '';
for await (const data of process.stdin) input += data;
const request = JSON.parse(input);

const newAgent = () =>
  new HttpAgent({
    url: `${request.baseUrl}/api/ag-ui`,
    threadId: request.threadId,
    headers: request.cookie ? { cookie: request.cookie } : {},
  });

let agent = newAgent();
let pending = []; // the browser tools' calls the last run left for this client
const runs = [];
for (const [index, run] of request.runs.entries()) {
  if (run.fresh) agent = newAgent();
  if (run.text !== undefined) {
    agent.addMessage({ id: `${request.threadId}-sent-${index}`, role: 'user', content: run.text });
  }
  for (const toolCallId of run.outputs ? pending : []) {
    const call = agent.messages.flatMap((message) => message.toolCalls ?? []).find((each) => each.id === toolCallId);
    const content = run.outputs[call.function.name];
    agent.addMessage({ id: `${toolCallId}-answer`, role: 'tool', toolCallId, content });
  }
  pending = [];
  const answered = 'resolve' in run || run.cancel;
  const resume = answered
    ? agent.pendingInterrupts.map((interrupt) =>
        run.cancel
          ? { interruptId: interrupt.id, status: 'cancelled' }
          : { interruptId: interrupt.id, status: 'resolved', payload: run.resolve },
      )
    : undefined;
  const events = [];
  let error;
  try {
    await agent.runAgent(
      {
        runId: `run-${index}`,
        forwardedProps: run.forwardedProps ?? {},
        tools: run.tools ?? [],
        ...(resume ? { resume } : {}),
      },
      {
        onEvent: ({ event }) => void events.push(event),
        onRunFinishedEvent: (params) => void (pending = params.pendingToolCallIds ?? []),
      },
    );
  } catch (caught) {
    error = String(caught?.message ?? caught);
  }
  const messages = structuredClone(agent.messages);
  runs.push({ types: events.map((event) => event.type), events, pending, messages, error });
}
process.stdout.write(JSON.stringify({ runs }));
