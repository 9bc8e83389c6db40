import { useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import type { Memory, MemoryStatus, MemoryType } from "../api/types";
import { formatTime } from "../format";
import { t } from "../i18n";
import { ConfirmButton } from "./ConfirmButton";
import { ImportanceStars } from "./ImportanceStars";
import { MemoryHistory } from "./MemoryHistory";
import { MemoryTypeSelect } from "./MemoryTypeSelect";

export type MemoryPatch = { type?: MemoryType; content?: string; importance?: number; status?: MemoryStatus };

/** One memory: select, edit, re-rate, archive or restore, see its history, delete. */
export function MemoryCard({
  memory,
  agentId,
  selected,
  onSelect,
  onPatch,
  onRevert,
  onDelete,
}: {
  memory: Memory;
  agentId: string;
  selected: boolean;
  onSelect: (selected: boolean) => void;
  onPatch: (patch: MemoryPatch) => Promise<boolean>;
  onRevert: (eventId: string) => Promise<boolean>;
  onDelete: () => Promise<boolean>;
}) {
  const [editing, setEditing] = useState(false);
  const [showHistory, setShowHistory] = useState(false);
  const [content, setContent] = useState(memory.content);
  const [type, setType] = useState<MemoryType>(memory.type);

  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (await onPatch({ content: content.trim(), type })) setEditing(false);
  };

  return (
    <li className={`card memory-card type-${memory.type}${selected ? " selected" : ""}`} data-testid="memory-card" data-memory-id={memory.id}>
      <div className="memory-head">
        <input
          type="checkbox"
          className="memory-select"
          checked={selected}
          onChange={(e) => onSelect(e.target.checked)}
          aria-label={t.memories.select}
          data-testid="memory-select"
        />
        <span className={`tag type-${memory.type}`} data-testid="memory-type">
          {t.memoryTypes[memory.type]}
        </span>
        <ImportanceStars value={memory.importance} onChange={(importance) => void onPatch({ importance })} />
        <span className="muted small" data-testid="memory-updated" data-updated-ms={memory.updatedAtMs}>
          {t.memories.updatedAt} {formatTime(memory.updatedAtMs)}
        </span>
        {memory.eventDate ? (
          <span className="tag" data-testid="memory-event-date">
            {t.memories.eventDate} {memory.eventDate}
          </span>
        ) : null}
        {memory.supersededBy ? (
          <span className="muted small" data-testid="memory-superseded">
            {t.memories.superseded}
          </span>
        ) : null}
      </div>
      {editing ? (
        <form className="memory-edit" onSubmit={save}>
          <MemoryTypeSelect value={type} onChange={setType} />
          <textarea
            rows={3}
            value={content}
            onChange={(e) => setContent(e.target.value)}
            aria-label={t.memories.content}
            data-testid="memory-edit-content"
          />
          <div className="form-actions">
            <button
              type="button"
              onClick={() => {
                setEditing(false);
                setContent(memory.content);
                setType(memory.type);
              }}
            >
              {t.common.cancel}
            </button>
            <button type="submit" className="primary" disabled={!content.trim()} data-testid="memory-save">
              {t.common.save}
            </button>
          </div>
        </form>
      ) : (
        <p className="memory-content" data-testid="memory-content">
          {memory.content}
        </p>
      )}
      <div className="memory-actions">
        {memory.sourceMessageId ? (
          <Link to={`/agents/${agentId}/chat?message=${encodeURIComponent(memory.sourceMessageId)}`} data-testid="memory-source">
            {t.memories.source}
          </Link>
        ) : (
          <span className="muted small">{t.memories.noSource}</span>
        )}
        {!editing ? (
          <button
            type="button"
            onClick={() => {
              setContent(memory.content);
              setType(memory.type);
              setEditing(true);
            }}
            data-testid="memory-edit"
          >
            {t.common.edit}
          </button>
        ) : null}
        <button
          type="button"
          onClick={() => void onPatch({ status: memory.status === "active" ? "archived" : "active" })}
          data-testid="memory-archive"
        >
          {memory.status === "active" ? t.memories.archive : t.memories.restore}
        </button>
        <button
          type="button"
          aria-expanded={showHistory}
          onClick={() => setShowHistory((shown) => !shown)}
          data-testid="memory-history-toggle"
        >
          {showHistory ? t.memories.hideHistory : t.memories.history}
        </button>
        <ConfirmButton question={t.memories.deleteConfirm} onConfirm={async () => void (await onDelete())} testId="memory-delete" />
      </div>
      {showHistory ? <MemoryHistory memoryId={memory.id} version={memory.updatedAtMs} onRevert={onRevert} /> : null}
    </li>
  );
}
