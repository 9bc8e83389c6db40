import type { ReactNode } from "react";
import { Link, NavLink } from "react-router-dom";
import { useAuth } from "../auth";
import { t } from "../i18n";
import { LanguageSwitch } from "./LanguageSwitch";

export function Layout({ children }: { children: ReactNode }) {
  const { user, logout } = useAuth();
  return (
    <div className="app">
      <header className="topbar">
        <Link to="/" className="brand">
          {t.appName}
        </Link>
        <nav aria-label={t.nav.menu}>
          <NavLink to="/" end>
            {t.nav.agents}
          </NavLink>
          <NavLink to="/keys" data-testid="nav-keys">
            {t.nav.apiKeys}
          </NavLink>
          <NavLink to="/account" data-testid="nav-account">
            {t.nav.account}
          </NavLink>
        </nav>
        <div className="topbar-user">
          <LanguageSwitch />
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
