// The chat's calls, for the agent's default conversation or for one conversation by id.
import { getConversation, listMessages, type MessagePage } from "../api/agents";
import { api, expectOk, unwrap } from "../api/client";
import type { components } from "../api/schema";
import type { Conversation } from "../api/types";

/** Which conversation the chat shows: `conversationId` null is the agent's default one. */
export type ChatTarget = { agentId: string; conversationId: string | null };

/** The `id` useChat sends (and a resumed stream is looked up by): the agent id for the default conversation. */
export const chatIdOf = (target: ChatTarget): string => target.conversationId ?? target.agentId;

export const targetKey = (target: ChatTarget): string => `${target.agentId}:${target.conversationId ?? "default"}`;

/** Stops the reply streaming now in this chat, on whichever instance streams it; resolves once it is stored. */
export const stopChat = (chatId: string): Promise<void> =>
  expectOk(api.POST("/api/chat/{chat_id}/stop", { params: { path: { chat_id: chatId } } }));

export type PageOptions = { limit?: number; before?: string };

export function loadMessages(target: ChatTarget, options: PageOptions = {}): Promise<MessagePage> {
  if (target.conversationId === null) return listMessages(target.agentId, options);
  return unwrap(
    api.GET("/api/conversations/{conversation_id}/messages", {
      params: { path: { conversation_id: target.conversationId }, query: options },
    }),
  );
}

export function loadConversation(target: ChatTarget): Promise<Conversation> {
  if (target.conversationId === null) return getConversation(target.agentId);
  return unwrap(
    api.GET("/api/conversations/{conversation_id}", { params: { path: { conversation_id: target.conversationId } } }),
  );
}

export const listConversations = async (agentId: string): Promise<Conversation[]> =>
  (await unwrap(api.GET("/api/agents/{agent_id}/conversations", { params: { path: { agent_id: agentId } } })))
    .conversations;

export const createConversation = (
  agentId: string,
  body: components["schemas"]["ConversationCreate"] = {},
): Promise<Conversation> =>
  unwrap(api.POST("/api/agents/{agent_id}/conversations", { params: { path: { agent_id: agentId } }, body }));

export const renameConversation = (conversationId: string, title: string | null): Promise<Conversation> =>
  unwrap(
    api.PATCH("/api/conversations/{conversation_id}", {
      params: { path: { conversation_id: conversationId } },
      body: { title },
    }),
  );

export const deleteConversation = (conversationId: string): Promise<void> =>
  expectOk(api.DELETE("/api/conversations/{conversation_id}", { params: { path: { conversation_id: conversationId } } }));

/** GET /healthz (outside the API schema: it answers 503 bodies of its own). */
export type Health = { status: string; database: string; llm: string; images?: boolean };

/** Which model answers: `llm` is "remote" or "local:<state>" (the embedded demo model). */
export async function getHealth(): Promise<Health> {
  const response = await fetch("/healthz");
  return (await response.json()) as Health;
}
