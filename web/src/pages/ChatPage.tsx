import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, type FileUIPart } from "ai";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { getAgent, type MessagePage } from "../api/agents";
import { chatFetch } from "../api/client";
import { ApiError, errorCodeOf, isNotFound } from "../api/errors";
import { authHeaders } from "../api/session";
import type { components } from "../api/schema";
import type { Agent, ChatDataParts, ChatMessage } from "../api/types";
import { chatIdOf, loadMessages, stopChat, targetKey, type ChatTarget } from "../chat/api";
import { ChatSidePanel } from "../chat/ChatSidePanel";
import { Composer } from "../chat/Composer";
import { DemoBanner } from "../chat/DemoBanner";
import {
  mergeLatestPage,
  messagePictures,
  oldestStoredId,
  PAGE_SIZE,
  prependPage,
  toChatMessage,
} from "../chat/history";
import { MessageBubble } from "../chat/MessageBubble";
import { useModelSeesPictures } from "../chat/useModelSeesPictures";
import { trackOpenStreams } from "../chat/openStreams";
import { useTabSync } from "../chat/tabSync";
import "../chat/chat.css";
import { ErrorBanner } from "../components/ErrorBanner";
import { announceTurnFinished } from "../events";
import { t } from "../i18n";
import { useOnVisible } from "../useOnVisible";
import { useResource } from "../useResource";

/** How often an idle chat on screen looks for another device's new message. */
const OTHER_DEVICE_CHECK_MS = 3000;

const SEARCH_PAGE_SIZE = 200;
// The UI message stream finishes after the reply is stored, but a stream that broke off (network)
// may end before: look again a few times before settling for a page without the reply.
const REPLY_RETRY_MS = [100, 250, 500, 1000, 2000];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Redraw a streaming reply at most this often: each redraw parses its markdown again.
const STREAM_THROTTLE_MS = 50;

type ChatBody = Pick<components["schemas"]["ChatRequest"], "agentId" | "conversationId">;

export function ChatPage() {
  const { agentId = "" } = useParams();
  const [searchParams] = useSearchParams();
  const conversationId = searchParams.get("conversation");
  const target = useMemo<ChatTarget>(() => ({ agentId, conversationId }), [agentId, conversationId]);
  const key = targetKey(target);
  const agent = useResource(`agent:${agentId}`, () => getAgent(agentId));
  const history = useResource(`history:${key}`, () => loadMessages(target, { limit: PAGE_SIZE }));

  const error = agent.error ?? history.error;
  if (error && isNotFound(error)) {
    // A deleted conversation's (or agent's) link: say so and offer the way back, not a retry.
    const back = agent.error ? "/" : `/agents/${agentId}/chat`;
    return (
      <div className="not-found-chat" data-testid="chat-not-found">
        <ErrorBanner error={error} />
        <Link to={back} data-testid="chat-way-back">
          {agent.error ? t.chat.backToAgents : t.chat.backToChat}
        </Link>
      </div>
    );
  }
  if (error) {
    return (
      <ErrorBanner
        error={error}
        onRetry={() => {
          void agent.reload();
          void history.reload();
        }}
      />
    );
  }
  if (!agent.data || !history.data) return <p className="muted">{t.common.loading}</p>;
  return <ChatView key={key} agent={agent.data} target={target} firstPage={history.data} />;
}

function ChatView({ agent, target, firstPage }: { agent: Agent; target: ChatTarget; firstPage: MessagePage }) {
  const agentId = agent.id;
  const chatKey = targetKey(target);
  const [panelOpen, setPanelOpen] = useState(false);
  const [listVersion, setListVersion] = useState(0);
  // "No earlier messages" only after paging back reached the start, never on a short, new chat.
  const [pagedBack, setPagedBack] = useState(false);
  const [searchParams] = useSearchParams();
  const focusId = searchParams.get("message");
  const [hasMore, setHasMore] = useState(firstPage.hasMore);
  const [loadingEarlier, setLoadingEarlier] = useState(false);
  const [historyError, setHistoryError] = useState<unknown>(null);
  const [panelVersion, setPanelVersion] = useState(0);
  // What the running turn's stream said about memories and the conversation, shown at once.
  const [liveMemories, setLiveMemories] = useState<ChatDataParts["memory"][]>([]);
  const [liveConversation, setLiveConversation] = useState<ChatDataParts["conversation"] | null>(null);
  // the code of the stream's last error (its `data-error` part), so the banner says it in the UI's words
  const [streamError, setStreamError] = useState<ApiError | null>(null);
  // The failed turn's error, kept until the user acts or a reply streams here: useChat clears its
  // own `error` when any request starts, and a look for a live reply elsewhere (resume) is one.
  const [turnError, setTurnError] = useState<unknown>(null);
  // when the model is sent no pictures, the composer says so once
  const modelSeesPictures = useModelSeesPictures();
  const [stopping, setStopping] = useState(false);

  // The AI SDK's UI message stream. A reply that streams while the page (re)loads is picked up
  // from its start (resume: GET /api/ui/chat/{id}/stream, the transport's default URL).
  const openStreams = useMemo(() => trackOpenStreams(chatFetch), []);
  const transport = useMemo(
    () =>
      new DefaultChatTransport<ChatMessage>({
        api: "/api/ui/chat",
        headers: () => authHeaders(),
        body: { agentId, conversationId: target.conversationId ?? undefined } satisfies ChatBody,
        fetch: openStreams.fetch,
        // The server reads the history from its own store; only the newest message matters.
        // Sending just that keeps a long, paged-back chat within the request limits.
        prepareSendMessagesRequest: ({ id, messages, body, trigger, messageId }) => ({
          body: { ...body, id, messages: messages.slice(-1), trigger, messageId },
        }),
      }),
    [agentId, target.conversationId, openStreams],
  );

  const initialMessages = useMemo(() => firstPage.messages.map(toChatMessage), [firstPage]);
  const syncRef = useRef<(expectReply: boolean) => Promise<void>>(async () => {});
  const followRef = useRef<(evenIfBusy?: boolean) => Promise<void>>(async () => {});
  const metConflict = useRef(false);
  // While a look for a reply streaming elsewhere runs, no 重试 is offered for the turn.
  const [lookingForLive, setLookingForLive] = useState(false);

  const { messages, sendMessage, regenerate, stop, status, error, setMessages, resumeStream } = useChat<ChatMessage>({
    id: chatIdOf(target),
    messages: initialMessages,
    transport,
    experimental_throttle: STREAM_THROTTLE_MS,
    resume: true,
    onData: (part) => {
      if (part.type === "data-memory") {
        const note = part.data;
        setLiveMemories((list) => [note, ...list.filter((n) => n.memory.id !== note.memory.id)]);
      } else if (part.type === "data-conversation") {
        setLiveConversation(part.data);
      } else if (part.type === "data-error") {
        setStreamError(new ApiError(200, part.data.code, part.data.message));
      }
    },
    onError: (err) => {
      // A retry (or a send) while another tab or device's reply to it streams: follow that reply.
      if (errorCodeOf(err) !== "turn_in_progress") {
        setTurnError(err);
        return;
      }
      metConflict.current = true;
      setTimeout(() => void followRef.current(true), 0);
    },
    onFinish: ({ isAbort, isError }) => {
      // The refused request's end: following the live reply takes it from here (a sync now
      // would race it and drop the reply it shows).
      if (metConflict.current) {
        metConflict.current = false;
        return;
      }
      // Take the stored turn, with the server's ids, right away: after a failure that is the
      // user's message alone. A local abort (the stop request failed) syncs in stopReply.
      // A reply that came through here, this tab's or one it followed, leaves an earlier failure behind.
      if (!isError && !isAbort) setTurnError(null);
      if (isAbort) setPanelVersion((v) => v + 1);
      else void syncRef.current(!isError);
    },
  });

  const busy = status === "submitted" || status === "streaming";
  const busyRef = useRef(busy);
  const messagesRef = useRef(messages);
  useEffect(() => {
    busyRef.current = busy;
    messagesRef.current = messages;
  }, [busy, messages]);
  // Busy with a turn: useChat's status, or a reply's stream whose response is here before the
  // status says so (see chat/openStreams.ts).
  const isBusy = useCallback(() => busyRef.current || openStreams.count() > 0, [openStreams]);

  const sync = useCallback(async (expectReply: boolean) => {
    try {
      let page = await loadMessages(target, { limit: PAGE_SIZE });
      for (const wait of REPLY_RETRY_MS) {
        if (!expectReply || page.messages.at(-1)?.role === "assistant") break;
        await pause(wait);
        if (isBusy()) return;
        page = await loadMessages(target, { limit: PAGE_SIZE });
      }
      if (isBusy()) return; // a new turn started meanwhile; its own finish syncs again
      const merged = mergeLatestPage(messagesRef.current, page.messages.map(toChatMessage));
      setMessages(merged.messages);
      // Nothing kept in front of the page: its hasMore is the whole story.
      if (merged.messages.length === page.messages.length) setHasMore(page.hasMore);
      setHistoryError(null);
    } catch (err) {
      setHistoryError(err);
    }
    setPanelVersion((v) => v + 1);
    announceTurnFinished(agentId);
  }, [agentId, target, setMessages, isBusy]);

  // A reply streaming in this chat from another tab or device: this tab shows it live, from its
  // start (the resume endpoint; 204, and nothing changes, when nothing streams).
  const followLive = useCallback(async (evenIfBusy = false) => {
    if (isBusy() && !evenIfBusy) return;
    setLookingForLive(true);
    try {
      await resumeStream();
    } finally {
      setLookingForLive(false);
    }
    // After a refused retry the screen still shows the refusal's state: the server's view, whether
    // the reply streamed here (its own finish synced too) or had ended already.
    if (evenIfBusy) await syncRef.current(false);
  }, [resumeStream, isBusy]);
  useEffect(() => {
    followRef.current = followLive;
  }, [followLive]);
  const catchUp = useCallback(async () => {
    await sync(false);
    await followLive();
  }, [sync, followLive]);

  // Other tabs of this browser on the same conversation: each turn's start and end there makes
  // this one fetch the server's messages (see chat/tabSync.ts for why a channel, not a poll).
  // A tab busy with its own turn catches up when that turn finishes (its sync reads the server).
  const broadcast = useTabSync(agentId, (event) => {
    if (event.kind === "conversations") setListVersion((v) => v + 1);
    else if (event.chatKey !== chatKey) setListVersion((v) => v + 1);
    else if (!isBusy()) void catchUp();
  });
  const syncAndTell = useCallback(
    async (expectReply: boolean) => {
      await sync(expectReply);
      broadcast({ kind: "turn", agentId, chatKey });
    },
    [sync, broadcast, agentId, chatKey],
  );
  useEffect(() => {
    syncRef.current = syncAndTell;
  }, [syncAndTell]);
  // A reply this page follows that answers a message it does not show: the turn started after the
  // page was loaded and its first look for a live reply met it (a slow device; no sync came first,
  // and none runs while the reply streams). The stored message is fetched and put before the reply,
  // which streams on meanwhile. This tab's own turn is told apart by its unstored message before it.
  const fetchedAnswered = useRef<string | null>(null);
  useEffect(() => {
    const live = messages.at(-1);
    const answered = live?.metadata?.userMessageId;
    if (!live || live.role !== "assistant" || live.metadata?.stored || !answered) return;
    if (fetchedAnswered.current === live.id || messages.some((m) => m.id === answered)) return;
    const before = messages.at(-2);
    if (before && !before.metadata?.stored) return;
    fetchedAnswered.current = live.id;
    void (async () => {
      try {
        const page = await loadMessages(target, { limit: PAGE_SIZE });
        setMessages((current) => {
          const reply = current.at(-1);
          if (reply?.id !== live.id || current.some((m) => m.id === answered)) return current;
          const stored = page.messages.map(toChatMessage).filter((m) => m.id !== live.id);
          return [...mergeLatestPage(current.slice(0, -1), stored).messages, reply];
        });
      } catch {
        // offline for a moment: the reply's end syncs the page
      }
    })();
  }, [messages, target, setMessages]);

  // Once the reply streams, the user's message is stored: the other tabs can show it.
  useEffect(() => {
    if (status === "streaming") broadcast({ kind: "turn", agentId, chatKey });
  }, [status, broadcast, agentId, chatKey]);

  // The drawer (phones) closes with Escape too.
  useEffect(() => {
    if (!panelOpen) return;
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key === "Escape") setPanelOpen(false);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [panelOpen]);

  // Another device may have written meanwhile: coming back to this tab shows the server's view.
  useOnVisible(() => {
    if (!isBusy()) void catchUp();
  });
  // A device on screen hears of no other device's turn (the channel above is this browser's):
  // while it is idle it asks for the newest stored message now and then, and a message it does
  // not show yet (another device's, stored before its reply streams) makes it catch up and follow.
  useEffect(() => {
    const check = async () => {
      if (isBusy() || document.visibilityState !== "visible") return;
      try {
        const newest = (await loadMessages(target, { limit: 1 })).messages[0];
        if (!newest || isBusy()) return;
        if (!messagesRef.current.some((m) => m.id === newest.id)) await catchUp();
        // A turn being answered that this tab shows without its reply (it heard of the turn before
        // its stream could be followed, or not at all): follow it now.
        else if (newest.replyState === "pending" && messagesRef.current.at(-1)?.id === newest.id) await followLive();
      } catch {
        // offline for a moment: the next check, or coming back into view, repairs it
      }
    };
    const timer = window.setInterval(() => void check(), OTHER_DEVICE_CHECK_MS);
    return () => window.clearInterval(timer);
  }, [target, catchUp, followLive, isBusy]);

  // Scrolling: stay at the bottom while the reply streams in, unless the user scrolled up;
  // keep the view still when an earlier page is put in front.
  const listRef = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const prependAnchor = useRef<number | null>(null);

  const loadEarlier = useCallback(async () => {
    const before = oldestStoredId(messages);
    if (!before) return;
    setLoadingEarlier(true);
    try {
      const page = await loadMessages(target, { limit: PAGE_SIZE, before });
      const list = listRef.current;
      prependAnchor.current = list ? list.scrollHeight - list.scrollTop : null;
      setMessages((current) => prependPage(current, page.messages.map(toChatMessage)));
      setHasMore(page.hasMore);
      setPagedBack(true);
      setHistoryError(null);
    } catch (err) {
      setHistoryError(err);
    } finally {
      setLoadingEarlier(false);
    }
  }, [target, messages, setMessages]);

  const focusFound = focusId !== null && messages.some((m) => m.id === focusId);
  const focusMissing = focusId !== null && !focusFound && !hasMore;

  // A link from the memory library names a message: page back until it is shown.
  useEffect(() => {
    if (focusId === null || !hasMore || messagesRef.current.some((m) => m.id === focusId)) return;
    let cancelled = false;
    const search = async () => {
      let before = oldestStoredId(messagesRef.current);
      let more: boolean = true;
      let earlier: ChatMessage[] = [];
      while (!cancelled && more && before !== undefined && !earlier.some((m) => m.id === focusId)) {
        const page = await loadMessages(target, { limit: SEARCH_PAGE_SIZE, before });
        earlier = [...page.messages.map(toChatMessage), ...earlier];
        before = page.messages[0]?.id;
        more = page.hasMore;
      }
      if (cancelled) return;
      prependAnchor.current = null;
      setMessages(prependPage(messagesRef.current, earlier));
      setHasMore(more);
      setPagedBack(true);
    };
    search().catch((err: unknown) => {
      if (!cancelled) setHistoryError(err);
    });
    return () => {
      cancelled = true;
    };
  }, [target, focusId, hasMore, setMessages]);

  useLayoutEffect(() => {
    const list = listRef.current;
    if (!list) return;
    if (prependAnchor.current !== null) {
      list.scrollTop = list.scrollHeight - prependAnchor.current;
      prependAnchor.current = null;
      return;
    }
    if (focusId !== null && focusFound) return;
    if (atBottom.current) list.scrollTop = list.scrollHeight;
  }, [messages, status, focusId, focusFound]);

  useEffect(() => {
    if (focusId === null || !focusFound) return;
    document.getElementById(`message-${focusId}`)?.scrollIntoView({ block: "center" });
  }, [focusId, focusFound]);

  const send = (text: string, files: FileUIPart[]) => {
    atBottom.current = true;
    setStreamError(null);
    setTurnError(null);
    void sendMessage(files.length > 0 ? { text, files } : { text });
  };

  // 停止: the server stops the reply (on whichever instance streams it) and stores what was
  // streamed; this tab's stream then ends by itself. Then the local stop, in case it has not,
  // and the stored messages, so the screen shows exactly what was saved.
  const stopReply = async () => {
    setStopping(true);
    try {
      await stopChat(chatIdOf(target));
    } catch (err) {
      setHistoryError(err);
    } finally {
      await stop();
      setStopping(false);
      void sync(false);
    }
  };

  // The edited message and everything after it are replaced on the server; useChat does the same here.
  const editMessage = (messageId: string, text: string) => {
    if (busy) return;
    atBottom.current = true;
    setStreamError(null);
    setTurnError(null);
    // the edited message keeps its pictures: sent back by their stored URLs
    const edited = messages.find((m) => m.id === messageId);
    const files = edited ? messagePictures(edited).map((p) => ({ type: "file" as const, ...p })) : [];
    void sendMessage(files.length > 0 ? { text, files, messageId } : { text, messageId });
  };

  const last = messages.at(-1);
  // no banner over a reply that streams
  const shownError = busy ? null : (error ?? turnError);
  // Regenerate replaces the last reply; after a failed turn the same call answers the
  // stored user message again.
  const canRegenerate = !busy && !lookingForLive && last !== undefined;

  return (
    <div className={`chat-layout${panelOpen ? " panel-open" : ""}`}>
      <section className="chat-main">
        <div className="chat-header">
          <h1>
            {agent.name}
            {agent.handle ? <span className="agent-handle">{agent.handle}</span> : null}
          </h1>
          <div className="chat-header-links">
            <Link to={`/agents/${agentId}/memories`}>{t.agents.memories}</Link>
            <Link to={`/agents/${agentId}/edit`}>{t.chat.editAgent}</Link>
            <button
              type="button"
              className="panel-toggle"
              aria-expanded={panelOpen}
              aria-controls="chat-side-panel"
              onClick={() => setPanelOpen(true)}
              data-testid="open-panel"
            >
              {t.chat.openPanel}
            </button>
          </div>
        </div>
        <DemoBanner />
        <div
          className="message-list"
          ref={listRef}
          data-testid="message-list"
          onScroll={(e) => {
            const el = e.currentTarget;
            atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
          }}
        >
          <div className="load-earlier">
            {hasMore ? (
              <button type="button" onClick={() => void loadEarlier()} disabled={loadingEarlier} data-testid="load-earlier">
                {loadingEarlier ? t.common.loading : t.chat.loadEarlier}
              </button>
            ) : pagedBack ? (
              <span className="muted" data-testid="no-earlier">
                {t.chat.noEarlier}
              </span>
            ) : null}
          </div>
          {messages.length === 0 && !busy ? <p className="empty">{t.chat.empty}</p> : null}
          {focusMissing ? <p className="notice">{t.chat.messageNotFound}</p> : null}
          {messages.map((message) => (
            <MessageBubble
              key={message.id}
              message={message}
              agentName={agent.name}
              focused={message.id === focusId}
              streaming={status === "streaming" && message === last && message.role === "assistant"}
              canEdit={!busy && message.role === "user" && message.metadata?.stored === true}
              onEdit={(text) => editMessage(message.id, text)}
            />
          ))}
          {status === "submitted" ? (
            <div className="message assistant pending" data-testid="thinking">
              <div className="bubble muted">{t.chat.thinking}</div>
            </div>
          ) : null}
        </div>
        <ErrorBanner error={historyError} />
        {shownError ? (
          // "Not sent" only when the message never reached the server; a stream that broke off
          // came after the message was stored (and a partial reply saved as interrupted).
          <ErrorBanner error={streamError ?? shownError} title={streamError ? t.chat.replyErrorTitle : t.chat.errorTitle} />
        ) : null}
        <Composer
          busy={busy}
          stopping={stopping}
          regenerateLabel={canRegenerate ? (last?.role === "assistant" ? t.chat.regenerate : t.common.retry) : null}
          modelSeesPictures={modelSeesPictures}
          onSend={send}
          onRegenerate={() => {
            setStreamError(null);
            setTurnError(null);
            void regenerate();
          }}
          onStop={() => void stopReply()}
        />
      </section>
      <div className="drawer-backdrop" onClick={() => setPanelOpen(false)} aria-hidden="true" />
      <ChatSidePanel
        agent={agent}
        target={target}
        version={panelVersion}
        listVersion={listVersion}
        liveMemories={liveMemories}
        liveConversation={liveConversation}
        streaming={status === "streaming"}
        open={panelOpen}
        onClose={() => setPanelOpen(false)}
        onConversationsChanged={() => {
          setPanelOpen(false);
          broadcast({ kind: "conversations", agentId });
        }}
      />
    </div>
  );
}
