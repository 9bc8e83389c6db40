import { api, expectOk, unwrap } from "./client";
import type {
  Agent,
  AgentCreate,
  AgentPatch,
  Conversation,
  Memory,
  MemoryEvent,
  MemoryStatus,
  MemoryType,
  StoredMessage,
} from "./types";

export const listAgents = async (): Promise<Agent[]> => (await unwrap(api.GET("/api/agents"))).agents;

export const getAgent = (agentId: string): Promise<Agent> =>
  unwrap(api.GET("/api/agents/{agent_id}", { params: { path: { agent_id: agentId } } }));

export const createAgent = (body: AgentCreate): Promise<Agent> => unwrap(api.POST("/api/agents", { body }));

export const updateAgent = (agentId: string, body: AgentPatch): Promise<Agent> =>
  unwrap(api.PATCH("/api/agents/{agent_id}", { params: { path: { agent_id: agentId } }, body }));

export const deleteAgent = (agentId: string): Promise<void> =>
  expectOk(api.DELETE("/api/agents/{agent_id}", { params: { path: { agent_id: agentId } } }));

export const getConversation = (agentId: string): Promise<Conversation> =>
  unwrap(api.GET("/api/agents/{agent_id}/conversation", { params: { path: { agent_id: agentId } } }));

export type MessagePage = { messages: StoredMessage[]; hasMore: boolean };

export const listMessages = (agentId: string, options: { limit?: number; before?: string } = {}): Promise<MessagePage> =>
  unwrap(
    api.GET("/api/agents/{agent_id}/messages", {
      params: { path: { agent_id: agentId }, query: { limit: options.limit, before: options.before } },
    }),
  );

export const listMemories = async (agentId: string, status: MemoryStatus): Promise<Memory[]> =>
  (
    await unwrap(
      api.GET("/api/agents/{agent_id}/memories", { params: { path: { agent_id: agentId }, query: { status } } }),
    )
  ).memories;

export const createMemory = (
  agentId: string,
  body: { type: MemoryType; content: string; importance: number },
): Promise<Memory> =>
  unwrap(api.POST("/api/agents/{agent_id}/memories", { params: { path: { agent_id: agentId } }, body }));

export const updateMemory = (
  memoryId: string,
  body: { type?: MemoryType; content?: string; importance?: number; status?: MemoryStatus },
): Promise<Memory> =>
  unwrap(api.PATCH("/api/memories/{memory_id}", { params: { path: { memory_id: memoryId } }, body }));

export const deleteMemory = (memoryId: string): Promise<void> =>
  expectOk(api.DELETE("/api/memories/{memory_id}", { params: { path: { memory_id: memoryId } } }));

/** Every change to a memory, oldest first. */
export const getMemoryHistory = async (memoryId: string): Promise<MemoryEvent[]> =>
  (await unwrap(api.GET("/api/memories/{memory_id}/history", { params: { path: { memory_id: memoryId } } }))).events;

/** Restores the memory as it was before `eventId`; the server records it as a `reverted` event. */
export const revertMemory = (memoryId: string, eventId: string): Promise<Memory> =>
  unwrap(api.POST("/api/memories/{memory_id}/revert", { params: { path: { memory_id: memoryId } }, body: { eventId } }));
