import { useCallback, useState } from "react";

export type Action = {
  busy: boolean;
  /** The last failure, for an ErrorBanner; cleared when the action runs again. */
  error: unknown;
  /** Runs `action` once at a time; resolves to whether it worked. */
  run: (action: () => Promise<void>) => Promise<boolean>;
};

/** A button's or form's action: busy while it runs, its error kept for display. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}
