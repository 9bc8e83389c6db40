import { LOCALES, locale, setLocale, t, type Locale } from "../i18n";

/** 中文 / English; the choice is kept in localStorage and the page reloads in it. */
export function LanguageSwitch() {
  return (
    <select
      className="language-switch"
      value={locale}
      aria-label={t.nav.language}
      data-testid="language-switch"
      onChange={(e) => setLocale(e.target.value as Locale)}
    >
      {(Object.keys(LOCALES) as Locale[]).map((code) => (
        <option key={code} value={code} lang={code}>
          {LOCALES[code].label}
        </option>
      ))}
    </select>
  );
}
