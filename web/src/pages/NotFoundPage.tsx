import { Link } from "react-router-dom";
import { t } from "../i18n";

/** An address no page answers: say so, and offer the way back. */
export function NotFoundPage() {
  return (
    <section className="page not-found" data-testid="not-found">
      <h1>{t.errors.notFound}</h1>
      <p>{t.errors.notFoundHint}</p>
      <Link to="/" className="button primary" data-testid="back-home">
        {t.errors.backHome}
      </Link>
    </section>
  );
}
