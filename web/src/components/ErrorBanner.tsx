import { readableError } from "../api/errors";
import { t } from "../i18n";

export function ErrorBanner({ error, title, onRetry }: { error: unknown; title?: string; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div className="error-banner" role="alert" data-testid="error-banner">
      {title ? <strong>{title}：</strong> : null}
      <span className="error-text">{readableError(error)}</span>
      {onRetry ? (
        <button type="button" className="link-button" onClick={onRetry}>
          {t.common.retry}
        </button>
      ) : null}
    </div>
  );
}
