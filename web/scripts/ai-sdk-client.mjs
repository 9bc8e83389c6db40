// The AI SDK's own chat client (ai@7's AbstractChat, what useChat wraps), driven from Node against a
// running memchat, for the protocol tests (tests/test_ai_sdk_client.py). Prints one JSON line.
//
//   node scripts/ai-sdk-client.mjs send   <ui|text> TEXT   one turn, the chat's messages after it
//   node scripts/ai-sdk-client.mjs resume <ui|text>        useChat({resume: true}): resumeStream()
//
// Before the last line, a line {"connected": status} once each response's headers are here.
//
// Environment: MEMCHAT_URL, MEMCHAT_TOKEN, MEMCHAT_CHAT_ID (the agent id or a conversation id),
// MEMCHAT_AGENT_ID, MEMCHAT_MESSAGES (JSON: the messages the chat starts with, as after a refresh).
import { AbstractChat, DefaultChatTransport, TextStreamChatTransport } from "ai";

class State {
  constructor(messages) {
    this.status = "ready";
    this.error = undefined;
    this.messages = messages;
  }
  pushMessage = (message) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = (thing) => structuredClone(thing);
}

class Chat extends AbstractChat {
  constructor({ messages, ...init }) {
    const state = new State(messages);
    super({ ...init, state });
    this.chatState = state;
  }
}

const [command, kind, text] = process.argv.slice(2);
const base = process.env.MEMCHAT_URL;
const options = {
  headers: { Authorization: `Bearer ${process.env.MEMCHAT_TOKEN}` },
  body: { agentId: process.env.MEMCHAT_AGENT_ID },
  fetch: async (url, init) => {
    const response = await fetch(url, init);
    console.log(JSON.stringify({ connected: response.status }));
    return response;
  },
};
const transport =
  kind === "ui"
    ? new DefaultChatTransport({ api: `${base}/api/ui/chat`, ...options })
    : new TextStreamChatTransport({ api: `${base}/api/chat`, ...options });

const data = [];
const errors = [];
let finished = null;
const chat = new Chat({
  id: process.env.MEMCHAT_CHAT_ID,
  messages: JSON.parse(process.env.MEMCHAT_MESSAGES || "[]"),
  transport,
  onData: (part) => data.push(part),
  onError: (error) => errors.push(String(error?.message ?? error)),
  onFinish: ({ message, finishReason, isAbort, isError }) => {
    finished = { messageId: message.id, finishReason: finishReason ?? null, isAbort, isError };
  },
});

if (command === "send") {
  await chat.sendMessage({ text });
} else if (command === "resume") {
  await chat.resumeStream();
} else {
  throw new Error(`unknown command ${command}`);
}

console.log(
  JSON.stringify({
    status: chat.chatState.status,
    errors,
    data,
    finished,
    messages: chat.chatState.messages.map((m) => ({
      id: m.id,
      role: m.role,
      metadata: m.metadata ?? null,
      text: m.parts
        .filter((p) => p.type === "text")
        .map((p) => p.text)
        .join(""),
      reasoning: m.parts
        .filter((p) => p.type === "reasoning")
        .map((p) => `${p.state}:${p.text}`),
      partTypes: m.parts.map((p) => p.type),
    })),
  }),
);
