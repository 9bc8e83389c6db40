import { useState } from "react";
import { t } from "../i18n";

/** A delete button (or any risky one) that asks once more, inline, before it acts. */
export function ConfirmButton({
  label = t.common.delete,
  confirmLabel = t.common.confirmDelete,
  danger = true,
  question,
  onConfirm,
  testId,
}: {
  label?: string;
  confirmLabel?: string;
  /** Red buttons; false for a reversible action such as a revert. */
  danger?: boolean;
  question: string;
  onConfirm: () => void | Promise<void>;
  testId?: string;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={danger ? "danger" : "small"} data-testid={testId} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group">
      <span className="confirm-question">{question}</span>
      <button
        type="button"
        className={danger ? "danger solid" : "primary"}
        disabled={busy}
        data-testid={testId ? `${testId}-confirm` : undefined}
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        {t.common.cancel}
      </button>
    </span>
  );
}
