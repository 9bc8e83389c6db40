import { useEffect, useState } from "react";
import { getHealth } from "./api";

/** Whether the model is sent pictures (GET /healthz `images`); null until known or when the check fails. */
export function useModelSeesPictures(): boolean | null {
  const [sees, setSees] = useState<boolean | null>(null);
  useEffect(() => {
    let cancelled = false;
    getHealth().then(
      (health) => {
        if (!cancelled) setSees(health.images ?? false);
      },
      () => undefined,
    );
    return () => {
      cancelled = true;
    };
  }, []);
  return sees;
}
