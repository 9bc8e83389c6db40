import type { FileUIPart } from "ai";
import {
  useEffect,
  useRef,
  useState,
  type ClipboardEvent,
  type DragEvent,
  type FormEvent,
  type KeyboardEvent,
} from "react";
import { t } from "../i18n";
import { COMPACT_QUERY, useMedia } from "./useMedia";

/** What the server takes (PNG, JPEG, GIF, WebP), and how many per message. */
const PICTURE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_PICTURES = 4;
const NOTICE_KEY = "memchat.picturesNotSeenShown";

/** A photo larger than this is scaled down before it is sent (the server takes 1.4 MB by default). */
const FIT_BYTES = 1_200_000;
const FIT_STEPS: [number, number][] = [
  [2048, 0.85],
  [1600, 0.8],
  [1280, 0.75],
  [1024, 0.7],
];

/**
 * A phone's photo is often a few MB: a still picture over FIT_BYTES is drawn smaller and sent as
 * JPEG, a step at a time until it fits (an animated GIF is sent as it is, and refused if too big).
 */
async function fitted(file: File): Promise<{ mediaType: string; url: string }> {
  if (file.size <= FIT_BYTES || file.type === "image/gif") {
    return { mediaType: file.type, url: await readAsDataUrl(file) };
  }
  const bitmap = await createImageBitmap(file);
  try {
    for (const [edge, quality] of FIT_STEPS) {
      const scale = Math.min(1, edge / Math.max(bitmap.width, bitmap.height));
      const canvas = document.createElement("canvas");
      canvas.width = Math.max(1, Math.round(bitmap.width * scale));
      canvas.height = Math.max(1, Math.round(bitmap.height * scale));
      canvas.getContext("2d")?.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, "image/jpeg", quality));
      if (blob && blob.size <= FIT_BYTES) return { mediaType: "image/jpeg", url: await readAsDataUrl(blob) };
    }
  } finally {
    bitmap.close();
  }
  return { mediaType: file.type, url: await readAsDataUrl(file) }; // the server says why it is refused
}

function readAsDataUrl(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("unreadable"));
    reader.readAsDataURL(file);
  });
}

/**
 * The message field and its buttons. On phones (and touch screens) Enter makes a new line and the
 * placeholder has no "Enter 发送" hint; elsewhere Enter sends (never while an IME composes).
 * Pictures come from the 图片 button, a paste or a drop, and show as thumbnails until sent. When
 * the model reads no pictures, the user is told so once, with the first picture.
 */
export function Composer({
  busy,
  stopping,
  regenerateLabel,
  modelSeesPictures,
  onSend,
  onRegenerate,
  onStop,
}: {
  busy: boolean;
  stopping: boolean;
  /** null: no 重新生成 / 重试 button now. */
  regenerateLabel: string | null;
  /** null: not known yet. */
  modelSeesPictures: boolean | null;
  onSend: (text: string, files: FileUIPart[]) => void;
  onRegenerate: () => void;
  onStop: () => void;
}) {
  const compact = useMedia(COMPACT_QUERY);
  const [input, setInput] = useState("");
  const [pictures, setPictures] = useState<FileUIPart[]>([]);
  const [refused, setRefused] = useState(false);
  const [toldBefore] = useState(() => localStorage.getItem(NOTICE_KEY) !== null);
  const fileInput = useRef<HTMLInputElement>(null);

  const addFiles = async (files: File[]) => {
    const taken = files.filter((file) => PICTURE_TYPES.includes(file.type));
    const room = MAX_PICTURES - pictures.length;
    setRefused(taken.length < files.length || taken.length > room);
    const added = await Promise.all(
      taken.slice(0, Math.max(room, 0)).map(async (file) => ({
        type: "file" as const,
        filename: file.name,
        ...(await fitted(file)),
      })),
    );
    if (added.length === 0) return;
    setPictures((current) => [...current, ...added].slice(0, MAX_PICTURES));
  };

  // told once: with the first picture ever attached in this browser, while it is in the composer
  const notice = !toldBefore && modelSeesPictures === false && pictures.length > 0;
  useEffect(() => {
    if (notice) localStorage.setItem(NOTICE_KEY, "1");
  }, [notice]);

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const text = input.trim();
    if (!text || busy) return;
    setInput("");
    setPictures([]);
    setRefused(false);
    onSend(text, pictures);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (compact) return;
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) submit(event);
  };
  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = Array.from(event.clipboardData.files);
    if (files.length === 0) return; // text pastes as usual
    event.preventDefault();
    void addFiles(files);
  };
  const onDrop = (event: DragEvent<HTMLFormElement>) => {
    if (event.dataTransfer.files.length === 0) return;
    event.preventDefault();
    void addFiles(Array.from(event.dataTransfer.files));
  };

  return (
    <form
      className="composer"
      onSubmit={submit}
      onDragOver={(event) => event.preventDefault()}
      onDrop={onDrop}
      data-testid="composer-form"
    >
      {pictures.length > 0 ? (
        <ul className="composer-pictures" data-testid="composer-pictures">
          {pictures.map((picture, index) => (
            <li key={`${index}-${picture.url.length}`}>
              <img src={picture.url} alt={picture.filename ?? t.chat.picture} data-testid="composer-picture" />
              <button
                type="button"
                className="picture-remove"
                aria-label={t.chat.removePicture}
                onClick={() => setPictures((current) => current.filter((_, i) => i !== index))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {refused ? (
        <p className="composer-note warn" role="alert" data-testid="picture-refused">
          {t.chat.pictureNotTaken}
        </p>
      ) : null}
      {notice ? (
        <p className="composer-note" role="note" data-testid="pictures-not-seen">
          {t.chat.picturesNotSeen}
        </p>
      ) : null}
      <textarea
        name="message"
        rows={2}
        value={input}
        placeholder={compact ? t.chat.placeholderTouch : t.chat.placeholder}
        enterKeyHint={compact ? "enter" : "send"}
        onChange={(e) => setInput(e.target.value)}
        onKeyDown={onKeyDown}
        onPaste={onPaste}
        data-testid="composer"
      />
      <div className="composer-actions">
        <input
          ref={fileInput}
          type="file"
          accept={PICTURE_TYPES.join(",")}
          multiple
          hidden
          onChange={(event) => {
            void addFiles(Array.from(event.target.files ?? []));
            event.target.value = "";
          }}
          data-testid="attach-input"
        />
        <button
          type="button"
          onClick={() => fileInput.current?.click()}
          title={t.chat.attachPictureHint}
          disabled={pictures.length >= MAX_PICTURES}
          data-testid="attach"
        >
          {t.chat.attachPicture}
        </button>
        {regenerateLabel !== null ? (
          <button type="button" onClick={onRegenerate} data-testid="regenerate">
            {regenerateLabel}
          </button>
        ) : null}
        {busy ? (
          <button type="button" className="danger" onClick={onStop} disabled={stopping} data-testid="stop">
            {t.chat.stop}
          </button>
        ) : (
          <button type="submit" className="primary" disabled={!input.trim()} data-testid="send">
            {t.chat.send}
          </button>
        )}
      </div>
    </form>
  );
}
