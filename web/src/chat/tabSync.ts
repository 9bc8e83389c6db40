// Live sync between open tabs of this browser. A tab that finished a turn (or changed the
// conversation list) says so on a BroadcastChannel; the other tabs showing the same agent
// refetch from the server, which stays the only truth, and then follow a reply that still streams
// (ChatPage: the resume endpoint). No polling and no server change: the
// message is a hint to refetch, never data, so a missed or doubled message costs nothing worse
// than what the focus refetch (useOnVisible) already repairs.
import { useCallback, useEffect, useRef } from "react";

const CHANNEL = "memchat.chat";

export type TabEvent =
  /** A turn in this conversation stored the user message (started) or its reply (finished). */
  | { kind: "turn"; agentId: string; chatKey: string }
  /** The agent's conversation list changed (created, renamed, deleted). */
  | { kind: "conversations"; agentId: string };

export function useTabSync(agentId: string, onEvent: (event: TabEvent) => void): (event: TabEvent) => void {
  const latest = useRef(onEvent);
  const channel = useRef<BroadcastChannel | null>(null);
  useEffect(() => {
    latest.current = onEvent;
  });
  useEffect(() => {
    if (typeof BroadcastChannel === "undefined") return;
    const opened = new BroadcastChannel(CHANNEL);
    opened.onmessage = (message: MessageEvent<TabEvent>) => {
      if (message.data.agentId === agentId) latest.current(message.data);
    };
    channel.current = opened;
    return () => {
      channel.current = null;
      opened.close();
    };
  }, [agentId]);
  return useCallback((event: TabEvent) => channel.current?.postMessage(event), []);
}
