// The official OpenAI Node SDK against the reference gateway: its tool
// loop (runTools, plain and streamed) and its streaming helper, each
// printed as one JSON line for the Go test to judge.
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: `${process.env.GATEWAY_URL}/v1`, apiKey: process.env.API_KEY, maxRetries: 0 });

let calls = 0;
const tools = [{
  type: 'function',
  function: {
    name: 'lookup',
    description: 'Looks the answer up.',
    parameters: { type: 'object', properties: { query: { type: 'string' } } },
    parse: JSON.parse,
    function: async () => { calls++; return '42'; },
  },
}];
const ask = [{ role: 'user', content: 'Look the answer up, then tell me.' }];

const runner = client.chat.completions.runTools({ model: 'm', messages: ask, tools });
const final = await runner.finalChatCompletion();
console.log(JSON.stringify({
  step: 'tool loop', calls, content: await runner.finalContent(),
  finish: final.choices[0].finish_reason, messages: runner.messages.length,
}));

const streamed = client.chat.completions.runTools({ model: 'm', messages: ask, tools, stream: true });
let deltas = 0;
streamed.on('content', () => { deltas++; });
const streamedFinal = await streamed.finalChatCompletion();
console.log(JSON.stringify({
  step: 'streamed tool loop', calls, content: await streamed.finalContent(), deltas,
  finish: streamedFinal.choices[0].finish_reason,
}));

const stream = client.chat.completions.stream({
  model: 'm', messages: [{ role: 'user', content: 'hello' }], stream_options: { include_usage: true },
});
let chunks = 0;
for await (const _ of stream) chunks++;
const done = await stream.finalChatCompletion();
console.log(JSON.stringify({
  step: 'stream', chunks, content: done.choices[0].message.content, finish: done.choices[0].finish_reason,
  usage: done.usage ?? null,
}));
