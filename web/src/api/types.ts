// Names for the generated OpenAPI schemas the console uses.
import type { UIMessage } from "ai";
import type { components } from "./schema";

type Schemas = components["schemas"];

export type Agent = Schemas["AgentOut"];
export type AgentCreate = Schemas["AgentCreate"];
export type AgentPatch = Schemas["AgentPatch"];
export type AgentProfile = Schemas["AgentProfile"];
export type Conversation = Schemas["ConversationOut"];
export type StoredMessage = Schemas["MessageOut"];
export type Memory = Schemas["MemoryOut"];
export type MemoryType = Memory["type"];
export type MemoryStatus = Memory["status"];
export type MemoryEvent = Schemas["MemoryEventOut"];
export type MemoryEventKind = MemoryEvent["kind"];
export type MemoryActor = MemoryEvent["actor"];
export type MemorySnapshot = Schemas["MemorySnapshot"];
export type User = Schemas["UserOut"];

export const MEMORY_TYPES: readonly MemoryType[] = [
  "boundary",
  "preference",
  "relationship_goal",
  "conversation_style",
  "fact",
];

/** What the server knows about a message beyond its text; absent until it is stored. */
export type MessageMeta = {
  status?: string;
  createdAtMs?: number;
  stored?: boolean;
  /** From the UI message stream's `start` part: the stored user message this reply answers. */
  userMessageId?: string | null;
  conversationId?: string | null;
};

/** A memory a turn changed, as the UI message stream's `data-memory` part carries it. */
export type MemoryNote = { id: string; type: MemoryType; content: string; importance: number };

/** The UI message stream's data parts (both transient: they reach onData, never a message). */
export type ChatDataParts = {
  memory: { action: string; memory: MemoryNote };
  conversation: { conversationId: string | null; summary: string | null; messageCount: number | null };
  /** Sent just before an `error` part: the error's code, as in the JSON errors. */
  error: { code: string; message: string };
};

export type ChatMessage = UIMessage<MessageMeta, ChatDataParts>;
