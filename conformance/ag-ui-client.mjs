// Runs an AG-UI agent against threadline's POST /api/ag-ui with the real @ag-ui/client HttpAgent (its event
// verifier included), as a frontend does. Reads {baseUrl, cookie, threadId, runs: [{text?, fresh?, forwardedProps?,
// resolve?, cancel?}]} on stdin: a run with `text` adds that user message; `resolve` answers every interrupt the
// last run ended with (its value the payload), `cancel` declines them; `fresh` starts from a new HttpAgent that knows
// only the new message (a reloaded page). Prints, per run, the event types, the events, the agent's messages after
// it, and the error the client raised, if any.
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
const runs = [];
for (const [index, run] of request.runs.entries()) {
  if (run.fresh) agent = newAgent();
  if (run.text !== undefined) {
    agent.addMessage({ id: `${request.threadId}-sent-${index}`, role: 'user', content: run.text });
  }
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
      { runId: `run-${index}`, forwardedProps: run.forwardedProps ?? {}, ...(resume ? { resume } : {}) },
      { onEvent: ({ event }) => void events.push(event) },
    );
  } catch (caught) {
    error = String(caught?.message ?? caught);
  }
  runs.push({ types: events.map((event) => event.type), events, messages: structuredClone(agent.messages), error });
}
process.stdout.write(JSON.stringify({ runs }));
