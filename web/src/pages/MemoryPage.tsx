import { useEffect, useState, type FormEvent, type ReactNode } from "react";
import { Link, useParams } from "react-router-dom";
import { createMemory, deleteMemory, getAgent, listMemories, revertMemory, updateMemory } from "../api/agents";
import { MEMORY_TYPES, type Memory, type MemoryStatus, type MemoryType } from "../api/types";
import { ConfirmButton } from "../components/ConfirmButton";
import { ErrorBanner } from "../components/ErrorBanner";
import { ImportanceStars } from "../components/ImportanceStars";
import { MemoryHistory } from "../components/MemoryHistory";
import { MemoryTypeSelect } from "../components/MemoryTypeSelect";
import { onTurnFinished } from "../events";
import { formatTime } from "../format";
import { t } from "../i18n";
import { useOnVisible } from "../useOnVisible";
import { useResource } from "../useResource";

type TypeFilter = MemoryType | "all";

export function MemoryPage() {
  const { agentId = "" } = useParams();
  const [status, setStatus] = useState<MemoryStatus>("active");
  const [typeFilter, setTypeFilter] = useState<TypeFilter>("all");
  const [actionError, setActionError] = useState<unknown>(null);
  const agent = useResource(`agent:${agentId}`, () => getAgent(agentId));
  const memories = useResource(`memories:${agentId}:${status}`, () => listMemories(agentId, status));
  const { reload, setData } = memories;

  // New memories come from chat turns (this tab's or, on coming back, another's).
  useOnVisible(() => void reload());
  useEffect(
    () =>
      onTurnFinished((id) => {
        if (id === agentId) void reload();
      }),
    [agentId, reload],
  );

  /** Runs a change; a failure is shown above the list. Resolves to whether it worked. */
  const act = async (action: () => Promise<void>): Promise<boolean> => {
    setActionError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setActionError(err);
      return false;
    }
  };

  const replace = (updated: Memory) =>
    setData((list) =>
      updated.status === status
        ? list?.map((m) => (m.id === updated.id ? updated : m))
        : list?.filter((m) => m.id !== updated.id),
    );

  const shown = (memories.data ?? []).filter((m) => typeFilter === "all" || m.type === typeFilter);
  const counts = new Map<MemoryType, number>();
  for (const m of memories.data ?? []) counts.set(m.type, (counts.get(m.type) ?? 0) + 1);

  return (
    <section className="page">
      <div className="page-header">
        <h1>{t.memories.title(agent.data?.name ?? "…")}</h1>
        <Link to={`/agents/${agentId}/chat`} className="button">
          {t.memories.toChat}
        </Link>
      </div>
      <ErrorBanner error={agent.error ?? memories.error} onRetry={() => void reload()} />
      <ErrorBanner error={actionError} />

      <AddMemoryForm
        onAdd={(body) =>
          act(async () => {
            const created = await createMemory(agentId, body);
            if (status === "active") await reload();
            else setStatus(created.status);
          })
        }
      />

      <div className="filters">
        <div className="chips" role="tablist" aria-label={t.memories.type}>
          <FilterChip active={typeFilter === "all"} onClick={() => setTypeFilter("all")} testId="filter-all">
            {t.memories.all} {memories.data?.length ?? 0}
          </FilterChip>
          {MEMORY_TYPES.map((type) => (
            <FilterChip
              key={type}
              active={typeFilter === type}
              onClick={() => setTypeFilter(type)}
              testId={`filter-${type}`}
            >
              {t.memoryTypes[type]} {counts.get(type) ?? 0}
            </FilterChip>
          ))}
        </div>
        <div className="chips" role="tablist">
          <FilterChip active={status === "active"} onClick={() => setStatus("active")} testId="status-active">
            {t.memories.active}
          </FilterChip>
          <FilterChip active={status === "archived"} onClick={() => setStatus("archived")} testId="status-archived">
            {t.memories.archived}
          </FilterChip>
        </div>
      </div>

      {memories.loading && !memories.data ? <p className="muted">{t.common.loading}</p> : null}
      {memories.data && shown.length === 0 ? <p className="empty">{t.memories.empty}</p> : null}
      <ul className="memory-list" data-testid="memory-list">
        {shown.map((memory) => (
          <MemoryCard
            key={memory.id}
            memory={memory}
            agentId={agentId}
            onPatch={(patch) => act(async () => replace(await updateMemory(memory.id, patch)))}
            onRevert={(eventId) => act(async () => replace(await revertMemory(memory.id, eventId)))}
            onDelete={() =>
              act(async () => {
                await deleteMemory(memory.id);
                setData((list) => list?.filter((m) => m.id !== memory.id));
              })
            }
          />
        ))}
      </ul>
    </section>
  );
}

function FilterChip({
  active,
  onClick,
  testId,
  children,
}: {
  active: boolean;
  onClick: () => void;
  testId: string;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      role="tab"
      aria-selected={active}
      className={`chip${active ? " active" : ""}`}
      onClick={onClick}
      data-testid={testId}
    >
      {children}
    </button>
  );
}

type Patch = { type?: MemoryType; content?: string; importance?: number; status?: MemoryStatus };

function MemoryCard({
  memory,
  agentId,
  onPatch,
  onRevert,
  onDelete,
}: {
  memory: Memory;
  agentId: string;
  onPatch: (patch: Patch) => Promise<boolean>;
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
    <li className={`card memory-card type-${memory.type}`} data-testid="memory-card" data-memory-id={memory.id}>
      <div className="memory-head">
        <span className={`tag type-${memory.type}`} data-testid="memory-type">
          {t.memoryTypes[memory.type]}
        </span>
        <ImportanceStars value={memory.importance} onChange={(importance) => void onPatch({ importance })} />
        <span className="muted small">
          {t.memories.updatedAt} {formatTime(memory.updatedAtMs)}
        </span>
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

function AddMemoryForm({
  onAdd,
}: {
  onAdd: (body: { type: MemoryType; content: string; importance: number }) => Promise<boolean>;
}) {
  const [open, setOpen] = useState(false);
  const [type, setType] = useState<MemoryType>("preference");
  const [importance, setImportance] = useState(3);
  const [content, setContent] = useState("");

  if (!open) {
    return (
      <button type="button" className="primary add-memory" onClick={() => setOpen(true)} data-testid="add-memory">
        {t.memories.add}
      </button>
    );
  }
  return (
    <form
      className="card form add-memory-form"
      data-testid="add-memory-form"
      onSubmit={async (event) => {
        event.preventDefault();
        if (await onAdd({ type, content: content.trim(), importance })) {
          setContent("");
          setOpen(false);
        }
      }}
    >
      <h2>{t.memories.addTitle}</h2>
      <div className="row">
        <label>
          {t.memories.type}
          <MemoryTypeSelect name="type" value={type} onChange={setType} />
        </label>
        <label>
          {t.memories.importance}
          <ImportanceStars value={importance} onChange={setImportance} />
        </label>
      </div>
      <label>
        {t.memories.content}
        <textarea name="content" rows={3} required value={content} onChange={(e) => setContent(e.target.value)} />
      </label>
      <div className="form-actions">
        <button type="button" onClick={() => setOpen(false)}>
          {t.common.cancel}
        </button>
        <button type="submit" className="primary" disabled={!content.trim()} data-testid="add-memory-submit">
          {t.common.save}
        </button>
      </div>
    </form>
  );
}
