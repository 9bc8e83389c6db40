import { useCallback, useEffect, useMemo, useState, type ReactNode } from "react";
import { Link, useParams } from "react-router-dom";
import { createMemory, getAgent, listMemories, revertMemory, updateMemory } from "../api/agents";
import { api, expectOk } from "../api/client";
import { isNotFound } from "../api/errors";
import { MEMORY_TYPES, type Memory, type MemoryStatus, type MemoryType } from "../api/types";
import { ConfirmButton } from "../components/ConfirmButton";
import { ErrorBanner } from "../components/ErrorBanner";
import { ImportanceStars } from "../components/ImportanceStars";
import { MemoryCard } from "../components/MemoryCard";
import { ConversationImport } from "../components/ConversationImport";
import { MemoryTransfer } from "../components/MemoryTransfer";
import { MemoryTypeSelect } from "../components/MemoryTypeSelect";
import { UndoToast, useUndo } from "../components/UndoToast";
import { onTurnFinished } from "../events";
import { t } from "../i18n";
import { useOnVisible } from "../useOnVisible";
import { useResource } from "../useResource";
import { NotFoundPage } from "./NotFoundPage";

type TypeFilter = MemoryType | "all";

/** Most important first, then the most recently changed: the order the prompt recalls them in. */
/** keepalive: a delete committed as the tab closes still reaches the server. */
const deleteMemory = (memoryId: string): Promise<void> =>
  expectOk(api.DELETE("/api/memories/{memory_id}", { params: { path: { memory_id: memoryId } }, keepalive: true }));

function byImportance(a: Memory, b: Memory): number {
  return b.importance - a.importance || b.updatedAtMs - a.updatedAtMs || a.id.localeCompare(b.id);
}

export function MemoryPage() {
  const { agentId = "" } = useParams();
  const [status, setStatus] = useState<MemoryStatus>("active");
  const [typeFilter, setTypeFilter] = useState<TypeFilter>("all");
  const [query, setQuery] = useState("");
  const [minImportance, setMinImportance] = useState(0);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  /** Deleted in the UI, held back from the server while the delete can be undone. */
  const [pendingDelete, setPendingDelete] = useState<ReadonlySet<string>>(new Set());
  const [actionError, setActionError] = useState<unknown>(null);
  const agent = useResource(`agent:${agentId}`, () => getAgent(agentId));
  const memories = useResource(`memories:${agentId}:${status}`, () => listMemories(agentId, status));
  const { reload, setData } = memories;
  const reloadQuietly = useCallback(() => void reload(), [reload]);
  const undo = useUndo();

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
  const act = useCallback(async (action: () => Promise<void>): Promise<boolean> => {
    setActionError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setActionError(err);
      return false;
    }
  }, []);

  const replace = (updated: Memory) =>
    setData((list) =>
      updated.status === status
        ? list?.map((m) => (m.id === updated.id ? updated : m))
        : list?.filter((m) => m.id !== updated.id),
    );

  const visible = useMemo(() => (memories.data ?? []).filter((m) => !pendingDelete.has(m.id)), [memories.data, pendingDelete]);
  const needle = query.trim().toLocaleLowerCase();
  const shown = visible
    .filter((m) => typeFilter === "all" || m.type === typeFilter)
    .filter((m) => m.importance >= minImportance)
    .filter((m) => !needle || m.content.toLocaleLowerCase().includes(needle))
    .sort(byImportance);
  const counts = new Map<MemoryType, number>();
  for (const m of visible) counts.set(m.type, (counts.get(m.type) ?? 0) + 1);
  const chosen = shown.filter((m) => selected.has(m.id));

  const select = (id: string, on: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });

  /** Archives (or restores) at once on the server; 撤销 sets each back. */
  const setStatusOf = (targets: Memory[], to: MemoryStatus) =>
    act(async () => {
      const ids = new Set(targets.map((m) => m.id));
      await Promise.all(targets.map((m) => updateMemory(m.id, { status: to })));
      setData((list) => list?.filter((m) => !ids.has(m.id)));
      setSelected(new Set());
      const from = to === "archived" ? "active" : "archived";
      undo.offer({
        text: to === "archived" ? t.memories.archivedToast(targets.length) : t.memories.restoredToast(targets.length),
        undo: async () => {
          await act(async () => {
            await Promise.all(targets.map((m) => updateMemory(m.id, { status: from })));
          });
          await reload();
        },
      });
    });

  /** Hides them now; the server deletes them when the undo window closes (or the page does). */
  const remove = (targets: Memory[]) => {
    const ids = targets.map((m) => m.id);
    setPendingDelete((current) => new Set([...current, ...ids]));
    setSelected(new Set());
    const forget = () =>
      setPendingDelete((current) => new Set([...current].filter((id) => !ids.includes(id))));
    undo.offer({
      text: t.memories.deletedToast(ids.length),
      undo: async () => forget(),
      commit: async () => {
        await act(async () => {
          await Promise.all(ids.map((id) => deleteMemory(id)));
          setData((list) => list?.filter((m) => !ids.includes(m.id)));
        });
        forget();
      },
    });
    return Promise.resolve(true);
  };

  if (isNotFound(agent.error)) return <NotFoundPage />;
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

      <div className="memory-tools">
        <AddMemoryForm
          onAdd={(body) =>
            act(async () => {
              const created = await createMemory(agentId, body);
              if (status === "active") await reload();
              else setStatus(created.status);
            })
          }
        />
        <MemoryTransfer
          agentId={agentId}
          agentName={agent.data?.name ?? ""}
          onImported={() => void reload()}
          onError={setActionError}
        />
        <ConversationImport agentId={agentId} onProgress={reloadQuietly} onError={setActionError} />
      </div>

      <div className="filters">
        <div className="chips" role="tablist" aria-label={t.memories.type}>
          <FilterChip active={typeFilter === "all"} onClick={() => setTypeFilter("all")} testId="filter-all">
            {t.memories.all} {visible.length}
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
      <div className="filters search-row">
        <input
          type="search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          placeholder={t.memories.search}
          aria-label={t.memories.search}
          data-testid="memory-search"
        />
        <select
          value={minImportance}
          onChange={(e) => setMinImportance(Number(e.target.value))}
          aria-label={t.memories.importanceFilter}
          data-testid="memory-importance-filter"
        >
          <option value={0}>{t.memories.anyImportance}</option>
          {[5, 4, 3, 2].map((n) => (
            <option key={n} value={n}>
              {t.memories.atLeast(n)}
            </option>
          ))}
        </select>
      </div>

      {shown.length > 0 ? (
        <div className="bulk-bar" data-testid="bulk-bar">
          <label className="inline">
            <input
              type="checkbox"
              checked={chosen.length === shown.length}
              onChange={(e) => setSelected(e.target.checked ? new Set(shown.map((m) => m.id)) : new Set())}
              data-testid="select-all"
            />
            {t.memories.selectAll}
          </label>
          {chosen.length > 0 ? (
            <>
              <span className="muted small" data-testid="selected-count">
                {t.memories.selected(chosen.length)}
              </span>
              <button
                type="button"
                onClick={() => void setStatusOf(chosen, status === "active" ? "archived" : "active")}
                data-testid="bulk-archive"
              >
                {status === "active" ? t.memories.bulkArchive : t.memories.bulkRestore}
              </button>
              <ConfirmButton
                label={t.memories.bulkDelete}
                question={t.memories.bulkDeleteConfirm(chosen.length)}
                onConfirm={async () => void (await remove(chosen))}
                testId="bulk-delete"
              />
            </>
          ) : null}
        </div>
      ) : null}

      {memories.loading && !memories.data ? <p className="muted">{t.common.loading}</p> : null}
      {memories.data && visible.length === 0 ? <p className="empty">{t.memories.empty}</p> : null}
      {visible.length > 0 && shown.length === 0 ? <p className="empty">{t.memories.noMatch}</p> : null}
      <ul className="memory-list" data-testid="memory-list">
        {shown.map((memory) => (
          <MemoryCard
            key={memory.id}
            memory={memory}
            agentId={agentId}
            selected={selected.has(memory.id)}
            onSelect={(on) => select(memory.id, on)}
            onPatch={(patch) =>
              patch.status !== undefined && patch.status !== memory.status
                ? setStatusOf([memory], patch.status)
                : act(async () => replace(await updateMemory(memory.id, patch)))
            }
            onRevert={(eventId) => act(async () => replace(await revertMemory(memory.id, eventId)))}
            onDelete={() => remove([memory])}
          />
        ))}
      </ul>
      <UndoToast shown={undo.shown} onUndo={undo.undo} onDismiss={undo.dismiss} />
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
