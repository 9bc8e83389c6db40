import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { api, unwrap } from "./api/client";
import { getToken, onUnauthorized, setToken } from "./api/session";
import type { User } from "./api/types";

type AuthState = {
  token: string | null;
  user: User | null;
  /** Set when the last session ended with a 401, so the login page can say why. */
  expired: boolean;
  login: (email: string, password: string) => Promise<void>;
  signup: (email: string, password: string, displayName: string) => Promise<void>;
  logout: () => void;
  /** Swaps in a fresh token for this session (after a password change revoked the old ones). */
  renew: (token: string) => void;
};

/** sessionStorage: the account was just deleted (the sign-in page says so once). */
export const ACCOUNT_DELETED_KEY = "memchat.accountDeleted";

const AuthContext = createContext<AuthState | null>(null);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [token, setTokenState] = useState<string | null>(getToken);
  const [user, setUser] = useState<User | null>(null);
  const [expired, setExpired] = useState(false);

  const start = useCallback((next: { token: string; user: User }) => {
    setToken(next.token);
    setTokenState(next.token);
    setUser(next.user);
    setExpired(false);
  }, []);

  const logout = useCallback(() => {
    setToken(null);
    setTokenState(null);
    setUser(null);
  }, []);

  const renew = useCallback((next: string) => {
    setToken(next);
    setTokenState(next);
  }, []);

  useEffect(
    () =>
      onUnauthorized(() => {
        logout();
        setExpired(true);
      }),
    [logout],
  );

  useEffect(() => {
    if (token === null || user !== null) return;
    let cancelled = false;
    unwrap(api.GET("/api/me"))
      .then((me) => {
        if (!cancelled) setUser(me);
      })
      .catch(() => {
        // A 401 has already ended the session; anything else leaves the token for a retry.
      });
    return () => {
      cancelled = true;
    };
  }, [token, user]);

  const value = useMemo<AuthState>(
    () => ({
      token,
      user,
      expired,
      login: async (email, password) => start(await unwrap(api.POST("/api/auth/login", { body: { email, password } }))),
      signup: async (email, password, displayName) =>
        start(
          await unwrap(
            api.POST("/api/auth/signup", { body: { email, password, displayName: displayName || null } }),
          ),
        ),
      logout,
      renew,
    }),
    [token, user, expired, start, logout, renew],
  );

  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const state = useContext(AuthContext);
  if (state === null) throw new Error("useAuth outside AuthProvider");
  return state;
}
