import { useState } from "react";
import { createMemory, listMemories, updateMemory } from "../api/agents";
import { ApiError } from "../api/errors";
import { MEMORY_TYPES, type Memory, type MemoryStatus, type MemoryType } from "../api/types";
import { downloadJson } from "../download";
import { t } from "../i18n";
import { JsonFileButton } from "./JsonFileButton";

/** The file format: what `importMemories` reads back. */
export const MEMORY_EXPORT_FORMAT = "memchat.memories.v1";

type ExportedMemory = Pick<Memory, "type" | "content" | "importance" | "status" | "createdAtMs" | "updatedAtMs">;

function safeName(name: string): string {
  return name.replace(/[\\/:*?"<>|\s]+/g, "-").slice(0, 40) || "agent";
}

async function exportMemories(agentId: string, agentName: string): Promise<void> {
  const [active, archived] = await Promise.all([listMemories(agentId, "active"), listMemories(agentId, "archived")]);
  const memories: ExportedMemory[] = [...active, ...archived].map((m) => ({
    type: m.type,
    content: m.content,
    importance: m.importance,
    status: m.status,
    createdAtMs: m.createdAtMs,
    updatedAtMs: m.updatedAtMs,
  }));
  const today = new Date().toISOString().slice(0, 10);
  downloadJson(`memchat-memories-${safeName(agentName)}-${today}.json`, {
    format: MEMORY_EXPORT_FORMAT,
    agent: { id: agentId, name: agentName },
    exportedAtMs: Date.now(),
    memories,
  });
}

type Importable = { type: MemoryType; content: string; importance: number; status: MemoryStatus };

/** The memories in an export file (or a bare array of them); null when it is not one. */
export function parseMemoryFile(text: string): { valid: Importable[]; invalid: number } | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const list = Array.isArray(body) ? body : (body as { memories?: unknown } | null)?.memories;
  if (!Array.isArray(list)) return null;
  const valid: Importable[] = [];
  let invalid = 0;
  for (const item of list as Partial<Record<keyof Importable, unknown>>[]) {
    const type = item?.type;
    const content = typeof item?.content === "string" ? item.content.trim() : "";
    const importance = typeof item?.importance === "number" ? Math.round(item.importance) : 3;
    if (!MEMORY_TYPES.includes(type as MemoryType) || !content || importance < 1 || importance > 5) {
      invalid += 1;
      continue;
    }
    valid.push({ type: type as MemoryType, content, importance, status: item.status === "archived" ? "archived" : "active" });
  }
  return { valid, invalid };
}

/** Adds each memory through the REST API; a duplicate or a refused one is skipped, not fatal. */
async function importMemories(agentId: string, memories: Importable[]): Promise<{ added: number; skipped: number }> {
  let added = 0;
  let skipped = 0;
  for (const memory of memories) {
    try {
      const created = await createMemory(agentId, { type: memory.type, content: memory.content, importance: memory.importance });
      if (memory.status === "archived") await updateMemory(created.id, { status: "archived" });
      added += 1;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      skipped += 1;
    }
  }
  return { added, skipped };
}

/** 导出 JSON and 导入 JSON for one agent's memories. */
export function MemoryTransfer({
  agentId,
  agentName,
  onImported,
  onError,
}: {
  agentId: string;
  agentName: string;
  onImported: () => void;
  onError: (error: unknown) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setNotice(null);
    onError(null);
    try {
      await action();
    } catch (err) {
      onError(err);
    } finally {
      setBusy(false);
    }
  };

  const importFile = (file: File) =>
    run(async () => {
      const parsed = parseMemoryFile(await file.text());
      if (!parsed) {
        setNotice(t.memories.importInvalid);
        return;
      }
      const { added, skipped } = await importMemories(agentId, parsed.valid);
      setNotice(t.memories.importDone(added, skipped + parsed.invalid));
      onImported();
    });

  return (
    <div className="memory-transfer">
      <button type="button" disabled={busy} onClick={() => void run(() => exportMemories(agentId, agentName))} data-testid="memory-export">
        {t.memories.export}
      </button>
      <JsonFileButton label={t.memories.import} disabled={busy} onFile={(file) => void importFile(file)} testId="memory-import" />
      {notice ? (
        <span className="muted small" role="status" data-testid="memory-import-result">
          {notice}
        </span>
      ) : null}
    </div>
  );
}
