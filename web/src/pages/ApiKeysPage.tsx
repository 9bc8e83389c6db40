import { useState, type FormEvent } from "react";
import { createKey, deleteKey, listKeys, type ApiKey, type ApiKeyCreated } from "../api/keys";
import { ConfirmButton } from "../components/ConfirmButton";
import { ErrorBanner } from "../components/ErrorBanner";
import { formatTime } from "../format";
import { t } from "../i18n";
import { useAction } from "../useAction";
import { useResource } from "../useResource";

export function ApiKeysPage() {
  const keys = useResource("api-keys", listKeys);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<ApiKeyCreated | null>(null);
  const creating = useAction();
  const revoking = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await creating.run(async () => {
      const key = await createKey(name.trim());
      setCreated(key);
      setName("");
      keys.setData((list) => [key, ...(list ?? [])]);
    });
  };

  const revoke = (key: ApiKey) =>
    revoking.run(async () => {
      await deleteKey(key.id);
      keys.setData((list) => list?.filter((k) => k.id !== key.id));
      if (created?.id === key.id) setCreated(null);
    });

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
          <button type="submit" className="primary" disabled={creating.busy || !name.trim()} data-testid="key-create">
            {t.apiKeys.create}
          </button>
        </div>
        {created ? <NewKey created={created} /> : null}
      </form>
      <ErrorBanner error={creating.error ?? revoking.error} />
      <ErrorBanner error={keys.error} onRetry={() => void keys.reload()} />
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
              onConfirm={async () => void (await revoke(key))}
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
