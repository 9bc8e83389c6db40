import { useEffect, useRef, useState } from "react";
import { getImport, importConversation, parseConversationFile, type ImportStatus } from "../api/imports";
import { t } from "../i18n";

const POLL_MS = 1000;

/** 导入聊天记录: uploads an exported conversation as the agent's history, then shows the memory extraction's progress. */
export function ConversationImport({
  agentId,
  onProgress,
  onError,
}: {
  agentId: string;
  /** Called as memories arrive (each poll) and once more when the import is done. */
  onProgress: () => void;
  onError: (error: unknown) => void;
}) {
  const fileInput = useRef<HTMLInputElement>(null);
  const [status, setStatus] = useState<ImportStatus | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!status || status.state === "done") return;
    const timer = window.setTimeout(() => {
      getImport(agentId, status.id)
        .then((next) => {
          setStatus(next);
          onProgress();
        })
        .catch(onError);
    }, POLL_MS);
    return () => window.clearTimeout(timer);
  }, [agentId, status, onProgress, onError]);

  const upload = async (file: File) => {
    setNotice(null);
    setStatus(null);
    onError(null);
    const body = parseConversationFile(await file.text());
    if (!body) {
      setNotice(t.conversationImport.invalid);
      return;
    }
    setBusy(true);
    try {
      const started = await importConversation(agentId, body);
      setStatus(started);
      onProgress();
    } catch (err) {
      onError(err);
    } finally {
      setBusy(false);
    }
  };

  const running = busy || status?.state === "running";
  return (
    <div className="memory-transfer">
      <button type="button" disabled={running} onClick={() => fileInput.current?.click()} data-testid="conversation-import">
        {t.conversationImport.button}
      </button>
      <input
        ref={fileInput}
        type="file"
        accept="application/json,.json"
        hidden
        data-testid="conversation-import-file"
        onChange={(e) => {
          const file = e.target.files?.[0];
          e.target.value = "";
          if (file) void upload(file);
        }}
      />
      {status ? (
        <span className="muted small" role="status" data-testid="conversation-import-status" data-state={status.state}>
          {status.state === "done"
            ? t.conversationImport.done(status.messages)
            : t.conversationImport.progress(status.processed, status.total)}
          {status.state === "running" ? (
            <progress max={Math.max(status.total, 1)} value={status.processed} aria-label={t.conversationImport.button} />
          ) : null}
        </span>
      ) : null}
      {notice ? (
        <span className="muted small" role="status" data-testid="conversation-import-status">
          {notice}
        </span>
      ) : null}
    </div>
  );
}
