import type { ReactNode } from "react";
import { Link } from "react-router-dom";
import { useAuth } from "../auth";
import { t } from "../i18n";

export function Layout({ children }: { children: ReactNode }) {
  const { user, logout } = useAuth();
  return (
    <div className="app">
      <header className="topbar">
        <Link to="/" className="brand">
          {t.appName}
        </Link>
        <nav>
          <Link to="/">{t.nav.agents}</Link>
        </nav>
        <div className="topbar-user">
          <span data-testid="current-user">{user?.displayName || user?.email}</span>
          <button type="button" className="link-button" onClick={logout}>
            {t.nav.logout}
          </button>
        </div>
      </header>
      <main className="content">{children}</main>
    </div>
  );
}
