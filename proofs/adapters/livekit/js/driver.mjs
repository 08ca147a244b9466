// Steers the released agents-js OpenAI realtime session one move at a time for
// ackguard (proofs/adapters/livekit/cases_js.py). One JSON command per line on
// stdin; one JSON reply per line on stdout, as {"reply": ...}. Any other stdout
// line is the release's own log (pino, JSON), which the Python side keeps.
//
// usage: node driver.mjs INSTALL_DIR   (INSTALL_DIR holds node_modules)
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const require = createRequire(join(process.argv[2], 'package.json'));
const agents = require('@livekit/agents');
const openai = require('@livekit/agents-plugin-openai');
const { llm } = agents;

// the release's logger writes to stdout: warnings only, so a refused push shows
agents.initializeLogger({ pretty: false, level: 'warn' });

let model;
let session;
let received = 0;
let reconnected = 0;
// client events the session wrote to a socket, by type (it emits this just before)
const sent = {};
const pushes = [];

function item(spec) {
  if (spec.kind === 'function-call') {
    return llm.FunctionCall.create({ id: spec.id, callId: `${spec.id}-call`, name: 'lookup', args: '{}' });
  }
  if (spec.kind === 'function-output') {
    return llm.FunctionCallOutput.create({ id: spec.id, callId: `${spec.call}-call`, output: 'done', isError: false });
  }
  return llm.ChatMessage.create({ id: spec.id, role: 'user', content: [`text of ${spec.id}`] });
}

function push(chatCtx) {
  const record = { status: 'pending', reason: null };
  pushes.push(record);
  session.updateChatCtx(chatCtx).then(
    () => { record.status = 'fulfilled'; },
    (error) => { record.status = 'rejected'; record.reason = String(error); },
  );
  return pushes.length - 1;
}

const commands = {
  // the release's RealtimeModel and session, talking to the gated server
  open({ baseURL }) {
    model = new openai.realtime.RealtimeModel({ baseURL, apiKey: 'x', modalities: ['text'], turnDetection: null });
    session = model.session();
    session.on('openai_server_event_received', () => { received += 1; });
    session.on('session_reconnected', () => { reconnected += 1; });
    session.on('openai_client_event_queued', (ev) => { sent[ev.type] = (sent[ev.type] ?? 0) + 1; });
    session.on('error', () => {});
    return {};
  },
  // an update_chat_ctx with a context of the given items (the set-up's seed)
  push({ items }) {
    return { push: push(new llm.ChatContext(items.map(item))) };
  },
  // the tool-outputs site of @livekit/agents 1.7.0 (AgentActivity, after the tools
  // ran): a copy of the session's chat context with the outputs appended is pushed
  'tool-outputs'({ outputs }) {
    const chatCtx = session.chatCtx.copy();
    chatCtx.items.push(...outputs.map(item));
    return { push: push(chatCtx), request: chatCtx.items.map((i) => i.id) };
  },
  // one client event that is no item op (a live session sends audio all along)
  async 'clear-audio'() {
    await session.clearAudio();
    return {};
  },
  state() {
    return {
      mirror: session.chatCtx.items.map((i) => i.id),
      received,
      reconnected,
      sent: { ...sent },
      pushes: pushes.map((p) => ({ ...p })),
    };
  },
  async close() {
    await session.close();
    await model.close();
    return {};
  },
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { cmd, ...args } = JSON.parse(line);
  let reply;
  try {
    reply = await commands[cmd](args);
  } catch (error) {
    reply = { error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(`${JSON.stringify({ reply })}\n`);
  if (cmd === 'close') break;
}
process.exit(0);
