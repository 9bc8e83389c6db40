// A chat turn changes more than the chat: the summary, the counts, the agent list's
// preview and possibly new memories. Views that show those listen here and refetch.
type Listener = (agentId: string) => void;
const listeners = new Set<Listener>();

export function onTurnFinished(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function announceTurnFinished(agentId: string): void {
  for (const listener of listeners) listener(agentId);
}
