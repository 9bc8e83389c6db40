import { useCallback, useEffect, useRef, useState } from "react";
import { t } from "../i18n";

/** How long an action can be undone before it is committed. */
export const UNDO_WINDOW_MS = 8000;

export type UndoableAction = {
  text: string;
  /** Puts things back as they were. */
  undo: () => Promise<void>;
  /** Makes the action final (e.g. a delete held back for the undo window); run once. */
  commit?: () => Promise<void>;
};

type Shown = UndoableAction & { key: number };

/**
 * One undoable action at a time, shown as a toast. A newer action, closing the toast, the undo
 * window running out, leaving the page and closing the tab all commit the pending one; only
 * 撤销 takes it back.
 */
export function useUndo() {
  const [shown, setShown] = useState<Shown | null>(null);
  const pending = useRef<Shown | null>(null);
  const counter = useRef(0);

  const settle = useCallback(async (how: "commit" | "undo") => {
    const action = pending.current;
    if (!action) return;
    pending.current = null;
    try {
      if (how === "undo") await action.undo();
      else await action.commit?.();
    } finally {
      setShown((current) => (current?.key === action.key ? null : current));
    }
  }, []);

  const offer = useCallback(
    (action: UndoableAction) => {
      void settle("commit");
      counter.current += 1;
      const next = { ...action, key: counter.current };
      pending.current = next;
      setShown(next);
    },
    [settle],
  );

  useEffect(() => {
    if (!shown) return;
    const timer = window.setTimeout(() => void settle("commit"), UNDO_WINDOW_MS);
    return () => window.clearTimeout(timer);
  }, [shown, settle]);

  useEffect(() => {
    const onHide = () => void settle("commit");
    window.addEventListener("pagehide", onHide);
    return () => {
      window.removeEventListener("pagehide", onHide);
      onHide();
    };
  }, [settle]);

  return { shown, offer, undo: () => settle("undo"), dismiss: () => settle("commit") };
}

export function UndoToast({
  shown,
  onUndo,
  onDismiss,
}: {
  shown: UndoableAction | null;
  onUndo: () => Promise<void>;
  onDismiss: () => Promise<void>;
}) {
  const [busy, setBusy] = useState(false);
  if (!shown) return null;
  const run = (action: () => Promise<void>) => async () => {
    setBusy(true);
    try {
      await action();
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="toast" role="status" data-testid="undo-toast">
      <span data-testid="undo-toast-text">{shown.text}</span>
      <button type="button" className="link-button" disabled={busy} onClick={run(onUndo)} data-testid="undo">
        {t.common.undo}
      </button>
      <button
        type="button"
        className="link-button toast-close"
        disabled={busy}
        aria-label={t.common.close}
        onClick={run(onDismiss)}
        data-testid="undo-toast-close"
      >
        ×
      </button>
    </div>
  );
}
