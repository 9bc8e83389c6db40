import { useEffect } from "react";
import { Link } from "react-router-dom";
import { listMemories } from "../api/agents";
import type { Agent, ChatDataParts, MemoryNote } from "../api/types";
import { ErrorBanner } from "../components/ErrorBanner";
import { ImportanceStars } from "../components/ImportanceStars";
import { formatTime } from "../format";
import { t } from "../i18n";
import { useResource } from "../useResource";
import { loadConversation, loadMessages, targetKey, type ChatTarget } from "./api";
import { ConversationList } from "./ConversationList";

const PANEL_MEMORIES = 8;
// After a turn the server may still be making its memories (in the background, after the reply is
// stored): look again after each of these pauses until the reply says its extraction is done.
const MEMORY_POLL_MS = [500, 1000, 2000, 4000, 8000, 16000];
const GONE = new Set(["archived", "deleted"]);

type PanelMemory = MemoryNote & { live?: boolean };

/** The fetched memories with what the stream said since: new ones in, archived ones out, by importance. */
function withLiveNotes(fetched: MemoryNote[], live: ChatDataParts["memory"][]): PanelMemory[] {
  const byId = new Map<string, PanelMemory>(fetched.map((m) => [m.id, m]));
  for (const note of [...live].reverse()) {
    if (GONE.has(note.action)) byId.delete(note.memory.id);
    else byId.set(note.memory.id, { ...byId.get(note.memory.id), ...note.memory, live: true });
  }
  const fresh = new Set(live.map((n) => n.memory.id));
  // Stable: the server's order (importance, then most recent) within one importance, new ones first.
  return [...byId.values()].sort(
    (a, b) => b.importance - a.importance || Number(fresh.has(b.id)) - Number(fresh.has(a.id)),
  );
}

/**
 * The agent's conversations, then this conversation's summary and counts and the agent's top
 * memories; `version` moves after every chat turn, and the memories are read again until the turn's
 * extraction is done (up to half a minute). On phones it is a drawer (`open`).
 */
export function ChatSidePanel({
  agent,
  target,
  version,
  listVersion,
  liveMemories,
  liveConversation,
  streaming,
  open,
  onClose,
  onConversationsChanged,
}: {
  agent: Agent;
  target: ChatTarget;
  version: number;
  listVersion: number;
  /** The running turn's `data-memory` parts, newest first. */
  liveMemories: ChatDataParts["memory"][];
  /** The last `data-conversation` part: the stored summary and count. */
  liveConversation: ChatDataParts["conversation"] | null;
  streaming: boolean;
  open: boolean;
  onClose: () => void;
  onConversationsChanged: () => void;
}) {
  const conversation = useResource(`conversation:${targetKey(target)}`, () => loadConversation(target));
  const memories = useResource(`memories:${agent.id}:active`, () => listMemories(agent.id, "active"));
  const reloadConversation = conversation.reload;
  const reloadMemories = memories.reload;

  useEffect(() => {
    if (version === 0) return;
    void reloadConversation();
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const look = async (step: number) => {
      let pending = true;
      try {
        // The state first, the memories after: "done" then means the list read has them all.
        const newest = (await loadMessages(target, { limit: 1 })).messages.at(-1);
        pending = newest?.role === "assistant" && newest.extractionState === "pending";
      } catch {
        // look again at the next step
      }
      if (cancelled) return;
      await reloadMemories();
      const wait = MEMORY_POLL_MS[step];
      if (!pending || cancelled || wait === undefined) return;
      timer = setTimeout(() => void look(step + 1), wait);
    };
    void look(0);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [version, target, reloadConversation, reloadMemories]);

  // Once the reply streams, the user's message is stored and counted.
  useEffect(() => {
    if (streaming) void reloadConversation();
  }, [streaming, reloadConversation]);

  const stored = conversation.data;
  // The stream's figures until the refetch has them; never over a newer read (another tab's turn).
  const live = liveConversation;
  const c =
    stored &&
    live &&
    (live.conversationId ?? stored.id) === stored.id &&
    live.messageCount !== null &&
    live.messageCount >= stored.messageCount
      ? { ...stored, summary: live.summary ?? stored.summary, messageCount: live.messageCount }
      : stored;
  const shownMemories = memories.data ? withLiveNotes(memories.data, liveMemories) : undefined;
  const profile = agent.profile;
  return (
    <aside
      className={`side-panel${open ? " open" : ""}`}
      data-testid="side-panel"
      aria-label={t.chat.sidePanel}
      id="chat-side-panel"
    >
      <div className="drawer-head">
        <button type="button" className="link-button" onClick={onClose} data-testid="close-panel">
          {t.common.close}
        </button>
      </div>
      <ConversationList
        agentId={agent.id}
        activeId={target.conversationId}
        version={version + listVersion}
        onChanged={onConversationsChanged}
      />
      <h2>{t.chat.sidePanel}</h2>
      <ErrorBanner error={conversation.error ?? memories.error} />
      <dl className="stats">
        <div>
          <dt>{t.chat.messageCount}</dt>
          <dd data-testid="message-count">{c ? c.messageCount : "…"}</dd>
        </div>
        <div>
          <dt>{t.chat.lastMessageAt}</dt>
          <dd>{c?.lastMessageAtMs ? formatTime(c.lastMessageAtMs) : t.common.never}</dd>
        </div>
        {profile.relationship ? (
          <div>
            <dt>{t.agentForm.profile.relationship}</dt>
            <dd>{profile.relationship}</dd>
          </div>
        ) : null}
      </dl>
      <h3>{t.chat.summary}</h3>
      <p className="summary" data-testid="summary">
        {c?.summary || <span className="muted">{t.chat.noSummary}</span>}
      </p>
      <h3>{t.chat.memories}</h3>
      {shownMemories?.length === 0 ? <p className="muted">{t.chat.noMemories}</p> : null}
      <ul className="panel-memories" data-testid="panel-memories">
        {shownMemories?.slice(0, PANEL_MEMORIES).map((memory) => (
          <li key={memory.id} data-testid="panel-memory" data-live={memory.live ? "true" : undefined}>
            <span className={`tag type-${memory.type}`}>{t.memoryTypes[memory.type]}</span>
            <ImportanceStars value={memory.importance} />
            <span className="panel-memory-text">{memory.content}</span>
          </li>
        ))}
      </ul>
      <Link to={`/agents/${agent.id}/memories`} className="button">
        {t.chat.openLibrary}
      </Link>
    </aside>
  );
}
