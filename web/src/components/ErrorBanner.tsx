import { describeError } from "../api/errors";
import { t } from "../i18n";

/** An error in the UI language; the server's own (English) words folded away under 详情. */
export function ErrorBanner({ error, title, onRetry }: { error: unknown; title?: string; onRetry?: () => void }) {
  if (!error) return null;
  const { text, detail } = describeError(error);
  return (
    <div className="error-banner" role="alert" data-testid="error-banner">
      <p className="error-main">
        {title ? <strong>{t.common.labelled(title)}</strong> : null}
        <span className="error-text" data-testid="error-text">
          {text}
        </span>
        {onRetry ? (
          <button type="button" className="link-button" onClick={onRetry}>
            {t.common.retry}
          </button>
        ) : null}
      </p>
      {detail ? (
        <details className="error-detail" data-testid="error-detail">
          <summary>{t.errors.details}</summary>
          <code>{detail}</code>
        </details>
      ) : null}
    </div>
  );
}
