import { useState, type FormEvent, type KeyboardEvent } from "react";
import { t } from "../i18n";
import { COMPACT_QUERY, useMedia } from "./useMedia";

/**
 * The message field and its buttons. On phones (and touch screens) Enter makes a new line and the
 * placeholder has no "Enter 发送" hint; elsewhere Enter sends (never while an IME composes).
 */
export function Composer({
  busy,
  stopping,
  regenerateLabel,
  onSend,
  onRegenerate,
  onStop,
}: {
  busy: boolean;
  stopping: boolean;
  /** null: no 重新生成 / 重试 button now. */
  regenerateLabel: string | null;
  onSend: (text: string) => void;
  onRegenerate: () => void;
  onStop: () => void;
}) {
  const compact = useMedia(COMPACT_QUERY);
  const [input, setInput] = useState("");

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const text = input.trim();
    if (!text || busy) return;
    setInput("");
    onSend(text);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (compact) return;
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) submit(event);
  };

  return (
    <form className="composer" onSubmit={submit}>
      <textarea
        name="message"
        rows={2}
        value={input}
        placeholder={compact ? t.chat.placeholderTouch : t.chat.placeholder}
        enterKeyHint={compact ? "enter" : "send"}
        onChange={(e) => setInput(e.target.value)}
        onKeyDown={onKeyDown}
        data-testid="composer"
      />
      <div className="composer-actions">
        {regenerateLabel !== null ? (
          <button type="button" onClick={onRegenerate} data-testid="regenerate">
            {regenerateLabel}
          </button>
        ) : null}
        {busy ? (
          <button type="button" className="danger" onClick={onStop} disabled={stopping} data-testid="stop">
            {t.chat.stop}
          </button>
        ) : (
          <button type="submit" className="primary" disabled={!input.trim()} data-testid="send">
            {t.chat.send}
          </button>
        )}
      </div>
    </form>
  );
}
