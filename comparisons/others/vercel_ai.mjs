// The comparison's four tools written with the Vercel AI SDK (`ai`, `zod`), called by the SDK's
// own tool loop (`generateText`) with the same arguments as the other frameworks. The model is
// the SDK's mock model, which asks for one tool call per step: the SDK itself is real.
// Prints one JSON line per case: {case, outcome, shown} — `shown` is the tool result as the
// next request would carry it (JSON text).
import { generateText, tool, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';

const tools = {
  add: tool({
    description: 'Adds two numbers; a is at most 100.',
    inputSchema: z.object({ a: z.number().int().max(100), b: z.number().int() }),
    execute: async ({ a, b }) => a + b,
  }),
  reading: tool({
    description: 'A reading that is not a number.',
    inputSchema: z.object({}),
    outputSchema: z.object({ value: z.number() }),
    execute: async () => ({ value: NaN }),
  }),
  liar: tool({
    description: 'Says count is an integer and returns a string.',
    inputSchema: z.object({}),
    outputSchema: z.object({ count: z.number().int() }),
    execute: async () => ({ count: '3' }),
  }),
};

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

async function call(name, args) {
  let step = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      step += 1;
      if (step > 1) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      return {
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: name, input: JSON.stringify(args) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
  const result = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(2) });
  const parts = result.steps[0].content.filter((part) => part.type === 'tool-result' || part.type === 'tool-error');
  const part = parts[0];
  if (!part) return { outcome: 'no result' };
  if (part.type === 'tool-error') return { outcome: 'error', shown: String(part.error?.message ?? part.error).split('\n')[0] };
  return { outcome: 'success', shown: JSON.stringify(part.output) };
}

const cases = [
  ['valid arguments', 'add', { a: 1, b: 2 }],
  ['an unknown argument', 'add', { a: 1, b: 2, c: 3 }],
  ['a string where the schema says integer', 'add', { a: 'one', b: 2 }],
  ['a above the maximum of 100', 'add', { a: 1000, b: 2 }],
  ['a value holding NaN', 'reading', {}],
  ['a value that breaks its own output schema', 'liar', {}],
];
for (const [label, name, args] of cases) {
  console.log(JSON.stringify({ case: label, ...(await call(name, args)) }));
}
