import { useEffect, useState, type FormEvent } from "react";
import { Link, useNavigate } from "react-router-dom";
import type { Conversation } from "../api/types";
import { ConfirmButton } from "../components/ConfirmButton";
import { ErrorBanner } from "../components/ErrorBanner";
import { formatTime } from "../format";
import { t } from "../i18n";
import { useResource } from "../useResource";
import { createConversation, deleteConversation, listConversations, renameConversation } from "./api";

export const chatPath = (agentId: string, conversation: Pick<Conversation, "id" | "isDefault"> | null): string =>
  conversation === null || conversation.isDefault
    ? `/agents/${agentId}/chat`
    : `/agents/${agentId}/chat?conversation=${encodeURIComponent(conversation.id)}`;

export function conversationName(conversation: Conversation): string {
  if (conversation.title) return conversation.title;
  if (conversation.isDefault) return t.chat.defaultConversation;
  return `${t.chat.untitled} · ${formatTime(conversation.createdAtMs)}`;
}

/**
 * The agent's conversations: 新对话, switch, rename, delete. Each has its own history, summary and
 * count; the memories belong to the agent and are shared by all of them.
 */
export function ConversationList({
  agentId,
  activeId,
  version,
  onChanged,
}: {
  agentId: string;
  /** The conversation on screen; null: the default one. */
  activeId: string | null;
  /** Moves when a turn or another tab changed the list. */
  version: number;
  /** After a create, rename or delete: other tabs reload their lists. */
  onChanged: () => void;
}) {
  const list = useResource(`conversations:${agentId}`, () => listConversations(agentId));
  const navigate = useNavigate();
  const [renaming, setRenaming] = useState<string | null>(null);
  const [title, setTitle] = useState("");
  const [error, setError] = useState<unknown>(null);
  const reload = list.reload;

  useEffect(() => {
    if (version > 0) void reload();
  }, [version, reload]);

  // The conversation on screen was deleted (in another tab): back to the default one.
  const listed = list.data;
  useEffect(() => {
    if (activeId !== null && listed !== undefined && !listed.some((c) => c.id === activeId)) {
      navigate(chatPath(agentId, null), { replace: true });
    }
  }, [activeId, listed, agentId, navigate]);

  const isActive = (c: Conversation) => (activeId === null ? c.isDefault : c.id === activeId);

  const create = async () => {
    try {
      const created = await createConversation(agentId);
      setError(null);
      await reload();
      onChanged();
      navigate(chatPath(agentId, created));
    } catch (err) {
      setError(err);
    }
  };

  const saveTitle = async (event: FormEvent, conversation: Conversation) => {
    event.preventDefault();
    try {
      await renameConversation(conversation.id, title.trim() || null);
      setRenaming(null);
      setError(null);
      await reload();
      onChanged();
    } catch (err) {
      setError(err);
    }
  };

  const remove = async (conversation: Conversation) => {
    try {
      await deleteConversation(conversation.id);
      setError(null);
      await reload();
      onChanged();
      if (isActive(conversation)) navigate(chatPath(agentId, null));
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section className="conversations" aria-label={t.chat.conversations}>
      <div className="conversations-head">
        <h2>{t.chat.conversations}</h2>
        <button type="button" className="primary" onClick={() => void create()} data-testid="new-conversation">
          + {t.chat.newConversation}
        </button>
      </div>
      <ErrorBanner error={error ?? list.error} />
      <ul className="conversation-list" data-testid="conversation-list">
        {list.data?.map((c) => (
          <li
            key={c.id}
            className={isActive(c) ? "active" : undefined}
            data-testid="conversation"
            data-conversation-id={c.id}
            data-default={c.isDefault ? "true" : undefined}
            aria-current={isActive(c) ? "page" : undefined}
          >
            {renaming === c.id ? (
              <form className="conversation-rename" onSubmit={(event) => void saveTitle(event, c)}>
                <input
                  aria-label={t.chat.titleLabel}
                  value={title}
                  maxLength={200}
                  onChange={(event) => setTitle(event.target.value)}
                  data-testid="conversation-title-input"
                  autoFocus
                />
                <button type="submit" className="primary" data-testid="conversation-title-save">
                  {t.common.save}
                </button>
                <button type="button" onClick={() => setRenaming(null)}>
                  {t.common.cancel}
                </button>
              </form>
            ) : (
              <>
                <Link to={chatPath(agentId, c)} className="conversation-link">
                  <span className="conversation-name" data-testid="conversation-name">
                    {conversationName(c)}
                  </span>
                  <span className="conversation-count muted" data-testid="conversation-count">
                    {t.chat.messages(c.messageCount)}
                  </span>
                  {c.summary ? (
                    <span className="conversation-summary muted" data-testid="conversation-summary">
                      {c.summary}
                    </span>
                  ) : null}
                </Link>
                <span className="conversation-actions">
                  <button
                    type="button"
                    className="link-button"
                    onClick={() => {
                      setRenaming(c.id);
                      setTitle(c.title ?? "");
                    }}
                    data-testid="conversation-rename"
                  >
                    {t.chat.rename}
                  </button>
                  {c.isDefault ? null : (
                    <ConfirmButton
                      question={t.chat.deleteConversationConfirm}
                      onConfirm={() => remove(c)}
                      testId="conversation-delete"
                    />
                  )}
                </span>
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
