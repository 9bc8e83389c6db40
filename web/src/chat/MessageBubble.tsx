import { lazy, Suspense, useState, type KeyboardEvent } from "react";
import type { ChatMessage } from "../api/types";
import { formatTime } from "../format";
import { t } from "../i18n";
import { CopyButton } from "./CopyButton";
import { messagePictures, messageReasoning, messageText } from "./history";
import { Picture } from "./Picture";

// The markdown renderer and highlighter are a chunk of their own, loaded with the first reply:
// the rest of the console does not wait for them. Until then a reply shows as plain text.
const Markdown = lazy(() => import("./Markdown"));

export function MessageBubble({
  message,
  agentName,
  focused,
  streaming,
  canEdit,
  onEdit,
}: {
  message: ChatMessage;
  agentName: string;
  focused: boolean;
  streaming: boolean;
  /** A stored user message while no turn runs: it can be edited and answered again. */
  canEdit: boolean;
  onEdit: (text: string) => void;
}) {
  const status = message.metadata?.status;
  const text = messageText(message);
  const reasoning = message.role === "assistant" ? messageReasoning(message) : null;
  const pictures = messagePictures(message);
  const [draft, setDraft] = useState<string | null>(null);
  const editing = draft !== null && canEdit;

  const save = () => {
    const edited = draft?.trim();
    if (!edited) return;
    setDraft(null);
    if (edited !== text) onEdit(edited);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Escape") setDraft(null);
  };

  return (
    <div
      id={`message-${message.id}`}
      className={`message ${message.role}${focused ? " focused" : ""}${editing ? " editing" : ""}`}
      data-testid="message"
      data-role={message.role}
      data-message-id={message.id}
      data-status={streaming ? "streaming" : (status ?? "local")}
    >
      <div className="message-meta">
        <span>{message.role === "user" ? t.chat.you : agentName}</span>
        {message.metadata?.createdAtMs ? <time>{formatTime(message.metadata.createdAtMs)}</time> : null}
        {status === "incomplete" ? <span className="tag warn">{t.chat.incomplete}</span> : null}
        {status === "stopped" ? <span className="tag">{t.chat.stopped}</span> : null}
      </div>
      {reasoning ? (
        // open while the model thinks, folded once the reply comes (the reader can open it again)
        <details className="reasoning" open={reasoning.streaming || undefined} data-testid="reasoning">
          <summary>{t.chat.reasoning}</summary>
          <div className="reasoning-text">{reasoning.text}</div>
        </details>
      ) : null}
      {editing ? (
        <form
          className="edit-form"
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
        >
          <textarea
            aria-label={t.chat.editMessage}
            value={draft}
            rows={Math.min(8, Math.max(2, draft.split("\n").length))}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={onKeyDown}
            data-testid="edit-text"
            autoFocus
          />
          <div className="edit-actions">
            <button type="button" onClick={() => setDraft(null)}>
              {t.common.cancel}
            </button>
            <button type="submit" className="primary" disabled={!draft.trim()} data-testid="edit-save">
              {t.chat.saveEdit}
            </button>
          </div>
        </form>
      ) : (
        <div className="bubble" data-testid="message-text">
          {message.role === "assistant" ? (
            <Suspense fallback={<div className="plain-reply">{text}</div>}>
              <Markdown text={text} streaming={streaming} />
            </Suspense>
          ) : (
            text
          )}
          {streaming ? <span className="cursor" aria-hidden="true" /> : null}
        </div>
      )}
      {pictures.length > 0 ? (
        <div className="message-pictures" data-testid="message-pictures">
          {pictures.map((picture, index) => (
            <Picture key={`${index}-${picture.url}`} url={picture.url} mediaType={picture.mediaType} />
          ))}
        </div>
      ) : null}
      {!editing && !streaming && text ? (
        <div className="message-actions">
          {message.role === "assistant" ? <CopyButton text={text} label={t.chat.copyReply} testId="copy-reply" /> : null}
          {message.role === "user" && canEdit ? (
            <button type="button" className="link-button" onClick={() => setDraft(text)} data-testid="edit-message">
              {t.common.edit}
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
