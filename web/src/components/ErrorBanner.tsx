import { describeError } from "../api/errors";
import { t } from "../i18n";

export function ErrorBanner({ error, title, onRetry }: { error: unknown; title?: string; onRetry?: () => void }) {
  if (!error) return null;
  const { text, detail } = describeError(error);
  return (
    <div className="error-banner" role="alert" data-testid="error-banner">
      {title ? <strong>{title}：</strong> : null}
      <span className="error-text">{text}</span>
      {detail ? <span className="error-detail">{detail}</span> : null}
      {onRetry ? (
        <button type="button" className="link-button" onClick={onRetry}>
          {t.common.retry}
        </button>
      ) : null}
    </div>
  );
}
