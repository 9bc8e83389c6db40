import { useCallback, useEffect, useRef, useState } from "react";

export type Resource<T> = {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
  setData: (update: (current: T | undefined) => T | undefined) => void;
};

/**
 * Loads `load()` on mount and whenever `key` changes; `reload` fetches again (the server is
 * the truth). Answers that arrive after a newer request started are dropped.
 */
export function useResource<T>(key: string, load: () => Promise<T>): Resource<T> {
  const [state, setState] = useState<{ key: string; data?: T; error?: unknown; loading: boolean }>({
    key,
    loading: true,
  });
  const loadRef = useRef(load);
  const generation = useRef(0);

  useEffect(() => {
    loadRef.current = load;
  });

  const run = useCallback(async (forKey: string) => {
    const mine = ++generation.current;
    try {
      const data = await loadRef.current();
      if (mine === generation.current) setState({ key: forKey, data, loading: false });
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ ...s, key: forKey, error, loading: false }));
    }
  }, []);

  useEffect(() => {
    void run(key);
  }, [key, run]);

  const reload = useCallback(() => run(key), [key, run]);
  const setData = useCallback(
    (update: (current: T | undefined) => T | undefined) => setState((s) => ({ ...s, data: update(s.data) })),
    [],
  );

  const current = state.key === key;
  return {
    data: current ? state.data : undefined,
    error: current ? state.error : undefined,
    loading: !current || state.loading,
    reload,
    setData,
  };
}
