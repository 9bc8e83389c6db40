// Every string the console shows lives in src/locales/ (one file per locale, same keys: add a
// key to zh-CN.ts and en.ts together). The locale is chosen once per page load from
// localStorage; switching writes it and reloads, so module-level `t` stays a plain constant.
import { en } from "./locales/en";
import { zhCN, type Messages } from "./locales/zh-CN";

export type { Messages };

export const LOCALES = {
  "zh-CN": { label: "中文", messages: zhCN },
  en: { label: "English", messages: en },
} as const satisfies Record<string, { label: string; messages: Messages }>;

export type Locale = keyof typeof LOCALES;

const STORAGE_KEY = "memchat.locale";
const DEFAULT_LOCALE: Locale = "zh-CN";

function isLocale(value: string | null): value is Locale {
  return value !== null && Object.hasOwn(LOCALES, value);
}

function storedLocale(): Locale {
  let wanted: string | null = null;
  try {
    wanted = localStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage blocked (private mode, sandbox): the default it is.
  }
  return isLocale(wanted) ? wanted : DEFAULT_LOCALE;
}

/** The locale of this page load. */
export const locale: Locale = storedLocale();
export const t: Messages = LOCALES[locale].messages;
export const dateLocale: string = locale;

if (typeof document !== "undefined") {
  document.documentElement.lang = locale;
  document.title = t.appName;
}

/** Remembers the choice and reloads the page in it. */
export function setLocale(next: Locale): void {
  if (next === locale) return;
  localStorage.setItem(STORAGE_KEY, next);
  window.location.reload();
}
