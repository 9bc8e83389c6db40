import { useEffect, useState, type FormEvent } from "react";
import { Navigate, useLocation, useNavigate } from "react-router-dom";
import { ACCOUNT_DELETED_KEY, useAuth } from "../auth";
import { ErrorBanner } from "../components/ErrorBanner";
import { LanguageSwitch } from "../components/LanguageSwitch";
import { t } from "../i18n";

export function LoginPage({ mode }: { mode: "login" | "signup" }) {
  const { token, expired, login, signup } = useAuth();
  const navigate = useNavigate();
  const location = useLocation();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const state = location.state as { from?: string } | null;
  // Shown once, on the visit that deleting the account leads to.
  const [accountDeleted] = useState(() => sessionStorage.getItem(ACCOUNT_DELETED_KEY) !== null);
  useEffect(() => sessionStorage.removeItem(ACCOUNT_DELETED_KEY), []);
  const from = state?.from ?? "/";
  if (token) return <Navigate to={from} replace />;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (mode === "signup") await signup(email, password, displayName);
      else await login(email, password);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const signupMode = mode === "signup";
  return (
    <div className="auth-page">
      <form className="card auth-card" onSubmit={submit} aria-label={signupMode ? t.auth.signupTitle : t.auth.loginTitle}>
        <h1>{t.appName}</h1>
        <h2>{signupMode ? t.auth.signupTitle : t.auth.loginTitle}</h2>
        {accountDeleted ? (
          <p className="notice" role="status" data-testid="account-deleted">
            {t.auth.accountDeleted}
          </p>
        ) : expired && !signupMode ? (
          <p className="notice">{t.auth.sessionExpired}</p>
        ) : null}
        <label>
          {t.auth.email}
          <input
            name="email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label>
          {t.auth.password}
          <input
            name="password"
            type="password"
            autoComplete={signupMode ? "new-password" : "current-password"}
            required
            minLength={signupMode ? 8 : 1}
            aria-describedby={signupMode ? "password-hint" : undefined}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          {/* shown, not a placeholder: it stays in sight while the password is typed */}
          {signupMode ? (
            <small className="field-hint" id="password-hint" data-testid="password-hint">
              {t.auth.passwordHint}
            </small>
          ) : null}
        </label>
        {signupMode ? (
          <label>
            {t.auth.displayName}
            <input name="displayName" value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
          </label>
        ) : null}
        <ErrorBanner error={error} />
        <button type="submit" className="primary" disabled={busy}>
          {signupMode ? t.auth.signup : t.auth.login}
        </button>
        <button
          type="button"
          className="link-button"
          onClick={() => navigate(signupMode ? "/login" : "/signup", { state: state?.from ? { from: state.from } : null })}
        >
          {signupMode ? t.auth.toLogin : t.auth.toSignup}
        </button>
        <div className="auth-language">
          <LanguageSwitch />
        </div>
      </form>
    </div>
  );
}
