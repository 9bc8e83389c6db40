import { dateLocale } from "./i18n";

const timeOnly = new Intl.DateTimeFormat(dateLocale, { hour: "2-digit", minute: "2-digit" });
const dateTime = new Intl.DateTimeFormat(dateLocale, {
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
});
const fullDate = new Intl.DateTimeFormat(dateLocale, {
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
});

/** Today's times as HH:mm, this year's with the date, older ones with the year. */
export function formatTime(ms: number | null | undefined, now: Date = new Date()): string {
  if (ms === null || ms === undefined) return "";
  const date = new Date(ms);
  if (date.toDateString() === now.toDateString()) return timeOnly.format(date);
  if (date.getFullYear() === now.getFullYear()) return dateTime.format(date);
  return fullDate.format(date);
}
