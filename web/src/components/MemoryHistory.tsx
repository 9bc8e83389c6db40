import { getMemoryHistory } from "../api/agents";
import type { MemoryEvent, MemorySnapshot } from "../api/types";
import { formatTime } from "../format";
import { t } from "../i18n";
import { useResource } from "../useResource";
import { ConfirmButton } from "./ConfirmButton";
import { ErrorBanner } from "./ErrorBanner";

/** A memory's history, newest first: what changed, who changed it, and a way back from each step. */
export function MemoryHistory({
  memoryId,
  version,
  onRevert,
}: {
  memoryId: string;
  /** Changes whenever the memory does, so the list reloads after an edit or a revert. */
  version: number;
  onRevert: (eventId: string) => Promise<boolean>;
}) {
  const events = useResource(`memory-history:${memoryId}:${version}`, () => getMemoryHistory(memoryId));
  const newestFirst = [...(events.data ?? [])].reverse();
  return (
    <section className="memory-history" data-testid="memory-history" aria-label={t.memories.historyTitle}>
      <h3>{t.memories.historyTitle}</h3>
      <ErrorBanner error={events.error} onRetry={() => void events.reload()} />
      {events.data && newestFirst.length === 0 ? <p className="muted small">{t.memories.historyEmpty}</p> : null}
      <ol>
        {newestFirst.map((event) => (
          <HistoryEntry key={event.id} event={event} onRevert={() => onRevert(event.id)} />
        ))}
      </ol>
    </section>
  );
}

function HistoryEntry({ event, onRevert }: { event: MemoryEvent; onRevert: () => Promise<boolean> }) {
  return (
    <li className="memory-event" data-testid="memory-event" data-kind={event.kind} data-actor={event.actor}>
      <div className="memory-event-head">
        <strong data-testid="memory-event-kind">{t.memoryEvents[event.kind]}</strong>
        <span className="tag" data-testid="memory-event-actor">
          {t.memoryActors[event.actor]}
        </span>
        <span className="muted small">{formatTime(event.createdAtMs)}</span>
        <ConfirmButton
          label={t.memories.revert}
          confirmLabel={t.common.confirm}
          danger={false}
          question={t.memories.revertConfirm}
          onConfirm={async () => void (await onRevert())}
          testId="memory-event-revert"
        />
      </div>
      <div className="memory-event-diff">
        <Snapshot label={t.memories.before} snapshot={event.before} testId="memory-event-before" />
        <Snapshot label={t.memories.after} snapshot={event.after} testId="memory-event-after" />
      </div>
    </li>
  );
}

function Snapshot({ label, snapshot, testId }: { label: string; snapshot: MemorySnapshot | null; testId: string }) {
  return (
    <div className="memory-snapshot" data-testid={testId}>
      <span className="muted small">{label}</span>
      {snapshot ? (
        <p>
          <span className={`tag type-${snapshot.type}`}>{t.memoryTypes[snapshot.type]}</span>{" "}
          <span className="muted small">
            {t.memories.importance} {snapshot.importance}
            {snapshot.status === "archived" ? ` · ${t.memories.archived}` : ""}
          </span>{" "}
          <span data-testid={`${testId}-content`}>{snapshot.content}</span>
        </p>
      ) : (
        <p className="muted small">{t.memories.created}</p>
      )}
    </div>
  );
}
