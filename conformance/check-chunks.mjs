// Checks every chunk of a UI Message Stream (SSE bytes on stdin) against the chunk schema of each `ai`
// major version that has one (5, 6, 7): the schema useChat's transport applies to each chunk before using it.
// Prints {version: [chunk types rejected]} as JSON.
import { parseJsonEventStream as parse7, uiMessageChunkSchema as schema7 } from 'ai';
import { parseJsonEventStream as parse5, uiMessageChunkSchema as schema5 } from 'ai5';
import { parseJsonEventStream as parse6, uiMessageChunkSchema as schema6 } from 'ai6';

let input = '';
for await (const data of process.stdin) input += data;

const versions = { 5: [parse5, schema5], 6: [parse6, schema6], 7: [parse7, schema7] };
const rejected = {};
for (const [version, [parse, schema]] of Object.entries(versions)) {
  rejected[version] = [];
  const stream = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(input));
      controller.close();
    },
  });
  for await (const result of parse({ stream, schema })) {
    if (!result.success) rejected[version].push(result.rawValue?.type ?? JSON.stringify(result.rawValue));
  }
}
process.stdout.write(JSON.stringify(rejected));
