import { useEffect, useState } from "react";
import { authHeaders } from "../api/session";
import { t } from "../i18n";

/**
 * A picture of a message: a data URL as it is, a stored one (`/api/files/{id}`) fetched with the
 * session's token (an <img> cannot send it). A click opens it full size; a click or Escape closes it.
 */
export function Picture({ url, mediaType }: { url: string; mediaType: string }) {
  const src = usePictureSource(url);
  const [open, setOpen] = useState(false);

  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") setOpen(false);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [open]);

  return (
    <>
      <button
        type="button"
        className="picture-thumb"
        onClick={() => setOpen(true)}
        aria-label={t.chat.openPicture}
        data-testid="message-picture"
        data-media-type={mediaType}
      >
        {src ? <img src={src} alt={t.chat.picture} /> : null}
      </button>
      {open && src ? (
        <div
          className="picture-full"
          role="dialog"
          aria-label={t.chat.picture}
          onClick={() => setOpen(false)}
          data-testid="picture-full"
        >
          <img src={src} alt={t.chat.picture} />
          <button type="button" className="picture-close" aria-label={t.chat.closePicture}>
            ×
          </button>
        </div>
      ) : null}
    </>
  );
}

function usePictureSource(url: string): string | null {
  const inline = url.startsWith("data:");
  const [fetched, setFetched] = useState<string | null>(null);
  useEffect(() => {
    if (inline) return;
    let objectUrl: string | null = null;
    let cancelled = false;
    void fetch(url, { headers: authHeaders() })
      .then((response) => (response.ok ? response.blob() : null))
      .then((blob) => {
        if (cancelled || blob === null) return;
        objectUrl = URL.createObjectURL(blob);
        setFetched(objectUrl);
      })
      .catch(() => undefined); // a picture that cannot be loaded stays an empty frame
    return () => {
      cancelled = true;
      if (objectUrl !== null) URL.revokeObjectURL(objectUrl);
    };
  }, [url, inline]);
  return inline ? url : fetched;
}
