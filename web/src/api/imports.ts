// POST /api/agents/{id}/import and its progress (docs/import.md).
import { api, unwrap } from "./client";
import type { components } from "./schema";

export type ImportRequest = components["schemas"]["ImportRequest"];
export type ImportStatus = components["schemas"]["ImportOut"];

export const importConversation = (agentId: string, body: ImportRequest): Promise<ImportStatus> =>
  unwrap(api.POST("/api/agents/{agent_id}/import", { params: { path: { agent_id: agentId } }, body }));

export const getImport = (agentId: string, importId: string): Promise<ImportStatus> =>
  unwrap(
    api.GET("/api/agents/{agent_id}/imports/{import_id}", {
      params: { path: { agent_id: agentId, import_id: importId } },
    }),
  );

/** The messages of an exported conversation: `{messages: [...]}` (OpenAI-style or memchat's history) or a bare array. */
export function parseConversationFile(text: string): ImportRequest | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const messages = Array.isArray(body) ? body : (body as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages) || messages.length === 0) return null;
  const title = (body as { title?: unknown } | null)?.title;
  return { messages: messages as ImportRequest["messages"], ...(typeof title === "string" ? { title } : {}) };
}
