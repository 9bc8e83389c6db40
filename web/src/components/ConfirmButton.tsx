import { useState } from "react";
import { t } from "../i18n";

/** A delete button that asks once more, inline, before it acts. */
export function ConfirmButton({
  label = t.common.delete,
  question,
  onConfirm,
  testId,
}: {
  label?: string;
  question: string;
  onConfirm: () => void | Promise<void>;
  testId?: string;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="danger" data-testid={testId} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group">
      <span className="confirm-question">{question}</span>
      <button
        type="button"
        className="danger solid"
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
        {t.common.confirmDelete}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        {t.common.cancel}
      </button>
    </span>
  );
}
