// The AI SDK checks messages with zod, which otherwise probes `new Function` once as its schemas are made: the
// page's Content-Security-Policy forbids that, and the refusal was a console error on every load. Imported
// before anything else, so zod never tries.
import { config } from 'zod/v4/core';

config({ jitless: true });
