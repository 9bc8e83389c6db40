import { useEffect, useState } from "react";
import { t } from "../i18n";
import { getHealth } from "./api";

/** Says so while the embedded demo model answers (GET /healthz: llm "local:…"), with how to set up a real one. */
export function DemoBanner() {
  const [demo, setDemo] = useState(false);
  useEffect(() => {
    let cancelled = false;
    getHealth().then(
      (health) => {
        if (!cancelled) setDemo(health.llm.startsWith("local:"));
      },
      () => undefined, // no banner when the check itself fails: the chat shows its own errors
    );
    return () => {
      cancelled = true;
    };
  }, []);
  if (!demo) return null;
  return (
    <div className="demo-banner" role="note" data-testid="demo-banner">
      <span>{t.chat.demoModel}</span>
      <details>
        <summary>{t.chat.demoModelHow}</summary>
        <p>{t.chat.demoModelSteps}</p>
      </details>
    </div>
  );
}
