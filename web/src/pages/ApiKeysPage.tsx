import { useState, type FormEvent } from "react";
import { createKey, deleteKey, listKeys, type ApiKey, type ApiKeyCreated } from "../api/keys";
import { ConfirmButton } from "../components/ConfirmButton";
import { ErrorBanner } from "../components/ErrorBanner";
import { formatTime } from "../format";
import { t } from "../i18n";
import { useResource } from "../useResource";

export function ApiKeysPage() {
  const keys = useResource("api-keys", listKeys);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<ApiKeyCreated | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const key = await createKey(name.trim());
      setCreated(key);
      setName("");
      keys.setData((list) => [key, ...(list ?? [])]);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (key: ApiKey) => {
    setError(null);
    try {
      await deleteKey(key.id);
      keys.setData((list) => list?.filter((k) => k.id !== key.id));
      if (created?.id === key.id) setCreated(null);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section className="page narrow">
      <h1>{t.apiKeys.title}</h1>
      <p className="muted">{t.apiKeys.intro}</p>
      <form className="card settings-section" onSubmit={submit} data-testid="key-form">
        <div className="inline-form">
          <label>
            {t.apiKeys.name}
            <input
              name="keyName"
              required
              maxLength={100}
              placeholder={t.apiKeys.namePlaceholder}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          </label>
          <button type="submit" className="primary" disabled={busy || !name.trim()} data-testid="key-create">
            {t.apiKeys.create}
          </button>
        </div>
        {created ? <NewKey created={created} /> : null}
      </form>
      <ErrorBanner error={error ?? keys.error} onRetry={keys.error ? () => void keys.reload() : undefined} />
      {keys.loading && !keys.data ? <p className="muted">{t.common.loading}</p> : null}
      {keys.data?.length === 0 ? <p className="empty">{t.apiKeys.empty}</p> : null}
      <ul className="key-list" data-testid="key-list">
        {keys.data?.map((key) => (
          <li key={key.id} className="card key-row" data-testid="key-row" data-key-id={key.id}>
            <span className="key-name">{key.name}</span>
            <span className="key-meta">
              <code data-testid="key-prefix">{key.prefix}…</code> · {t.apiKeys.createdAt} {formatTime(key.createdAtMs)} ·{" "}
              {t.apiKeys.lastUsedAt} {key.lastUsedAtMs ? formatTime(key.lastUsedAtMs) : t.common.never}
            </span>
            <ConfirmButton
              label={t.apiKeys.revoke}
              question={t.apiKeys.revokeConfirm(key.name)}
              onConfirm={() => revoke(key)}
              testId="key-revoke"
            />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The new key, shown this once, with a copy button. */
function NewKey({ created }: { created: ApiKeyCreated }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="new-key" role="status" data-testid="new-key">
      <strong>{t.apiKeys.createdTitle}</strong>
      <div className="new-key-value">
        <code data-testid="new-key-value">{created.key}</code>
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard.writeText(created.key).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
          data-testid="new-key-copy"
        >
          {copied ? t.common.copied : t.common.copy}
        </button>
      </div>
    </div>
  );
}
