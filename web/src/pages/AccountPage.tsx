import { useState, type FormEvent } from "react";
import { changePassword, deleteAccount, exportAccount } from "../api/account";
import { ACCOUNT_DELETED_KEY, useAuth } from "../auth";
import { ErrorBanner } from "../components/ErrorBanner";
import { downloadJson } from "../download";
import { t } from "../i18n";
import { useAction } from "../useAction";

export function AccountPage() {
  const { user } = useAuth();
  return (
    <section className="page narrow">
      <h1>{t.account.title}</h1>
      <p className="muted">
        {t.account.signedInAs} <strong data-testid="account-email">{user?.email}</strong>
      </p>
      <PasswordForm />
      <ExportSection />
      <DeleteSection email={user?.email ?? ""} />
    </section>
  );
}

function PasswordForm() {
  const { renew } = useAuth();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [done, setDone] = useState(false);
  const action = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setDone(false);
    await action.run(async () => {
      const token = await changePassword(current, next);
      if (token) renew(token);
      setCurrent("");
      setNext("");
      setDone(true);
    });
  };

  return (
    <form className="card settings-section" onSubmit={submit} data-testid="password-form">
      <h2>{t.account.passwordTitle}</h2>
      <label>
        {t.account.currentPassword}
        <input
          name="currentPassword"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
        />
      </label>
      <label>
        {t.account.newPassword}
        <input
          name="newPassword"
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          placeholder={t.auth.passwordHint}
          value={next}
          onChange={(e) => setNext(e.target.value)}
        />
      </label>
      <ErrorBanner error={action.error} />
      {done ? (
        <p className="success" role="status" data-testid="password-changed">
          {t.account.passwordChanged}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={action.busy}>
          {t.account.changePassword}
        </button>
      </div>
    </form>
  );
}

function ExportSection() {
  const action = useAction();
  const exportNow = () =>
    action.run(async () => {
      const data = await exportAccount();
      downloadJson(`memchat-export-${new Date().toISOString().slice(0, 10)}.json`, data);
    });
  return (
    <div className="card settings-section">
      <h2>{t.account.exportTitle}</h2>
      <p className="muted">{t.account.exportHint}</p>
      <ErrorBanner error={action.error} />
      <div>
        <button type="button" disabled={action.busy} onClick={() => void exportNow()} data-testid="account-export">
          {t.account.export}
        </button>
      </div>
    </div>
  );
}

function DeleteSection({ email }: { email: string }) {
  const { logout } = useAuth();
  const [typed, setTyped] = useState("");
  const action = useAction();
  const confirmed = email !== "" && typed.trim().toLowerCase() === email.toLowerCase();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!confirmed) return;
    await action.run(async () => {
      await deleteAccount();
      // The sign-in page, where signing out lands, says that it is done: nothing else would.
      sessionStorage.setItem(ACCOUNT_DELETED_KEY, "1");
      logout();
    });
  };

  return (
    <form className="card settings-section danger-zone" onSubmit={submit} data-testid="delete-account-form">
      <h2>{t.account.deleteTitle}</h2>
      <p className="muted">{t.account.deleteHint}</p>
      <label>
        {t.account.deleteTypeEmail}
        <input
          name="confirmEmail"
          type="email"
          autoComplete="off"
          placeholder={email}
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
        />
      </label>
      <ErrorBanner error={action.error} />
      <div className="form-actions">
        <button type="submit" className="danger solid" disabled={!confirmed || action.busy} data-testid="delete-account">
          {t.account.deleteAccount}
        </button>
      </div>
    </form>
  );
}
