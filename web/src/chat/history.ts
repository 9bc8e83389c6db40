// Server history <-> useChat messages. What the server stores is the truth: after each turn
// the newest page replaces the local copies (whose ids useChat made up on the client).
import type { ChatMessage, StoredMessage } from "../api/types";

export const PAGE_SIZE = 50;

export function toChatMessage(message: StoredMessage): ChatMessage {
  return {
    id: message.id,
    role: message.role,
    parts: message.parts.map((part) =>
      part.type === "reasoning"
        ? { type: "reasoning" as const, text: part.text, state: "done" as const }
        : part.type === "file"
          ? { type: "file" as const, mediaType: part.mediaType, url: part.url }
          : { type: "text" as const, text: part.text },
    ),
    metadata: { status: message.status, createdAtMs: message.createdAtMs, stored: true },
  };
}

export function messageText(message: ChatMessage): string {
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** The pictures sent with a message: data URLs before it is stored, /api/files/{id} after. */
export function messagePictures(message: ChatMessage): { url: string; mediaType: string }[] {
  return message.parts.flatMap((part) => (part.type === "file" ? [{ url: part.url, mediaType: part.mediaType }] : []));
}

/** A reasoning model's thinking before the reply, and whether it is still streaming. */
export function messageReasoning(message: ChatMessage): { text: string; streaming: boolean } | null {
  const parts = message.parts.filter((part) => part.type === "reasoning");
  if (parts.length === 0) return null;
  return {
    text: parts.map((part) => part.text).join("\n\n"),
    streaming: parts.some((part) => part.state === "streaming"),
  };
}

/** The oldest message that came from the server: the cursor for "load earlier". */
export function oldestStoredId(messages: ChatMessage[]): string | undefined {
  return messages.find((m) => m.metadata?.stored)?.id;
}

/**
 * Puts the server's newest page in place of the local tail. Earlier pages the user loaded
 * stay in front of it. Without any overlap (many messages came from elsewhere), the page
 * alone is kept and `gap` says that earlier messages must be paged in again.
 */
export function mergeLatestPage(
  current: ChatMessage[],
  latest: ChatMessage[],
): { messages: ChatMessage[]; gap: boolean } {
  const first = latest[0];
  if (first === undefined) return { messages: [], gap: false };
  const at = current.findIndex((m) => m.id === first.id);
  if (at === -1) {
    const hadStored = current.some((m) => m.metadata?.stored);
    return { messages: latest, gap: hadStored };
  }
  return { messages: [...current.slice(0, at), ...latest], gap: false };
}

/** Puts an earlier page in front, skipping anything already shown. */
export function prependPage(current: ChatMessage[], earlier: ChatMessage[]): ChatMessage[] {
  const shown = new Set(current.map((m) => m.id));
  return [...earlier.filter((m) => !shown.has(m.id)), ...current];
}
