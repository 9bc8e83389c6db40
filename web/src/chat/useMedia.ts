import { useSyncExternalStore } from "react";

/** Phones and narrow windows: the side panel is a drawer, Enter makes a new line, no "Enter 发送" hint. */
export const COMPACT_QUERY = "(max-width: 860px), (pointer: coarse)";

export function useMedia(query: string): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const list = window.matchMedia(query);
      list.addEventListener("change", onChange);
      return () => list.removeEventListener("change", onChange);
    },
    () => window.matchMedia(query).matches,
  );
}
