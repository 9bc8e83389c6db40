import { useRef } from "react";

/** A button that opens the file picker for one JSON file and hands the chosen file on. */
export function JsonFileButton({
  label,
  disabled,
  onFile,
  testId,
}: {
  label: string;
  disabled?: boolean;
  onFile: (file: File) => void;
  testId: string;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" disabled={disabled} onClick={() => input.current?.click()} data-testid={testId}>
        {label}
      </button>
      <input
        ref={input}
        type="file"
        accept="application/json,.json"
        hidden
        data-testid={`${testId}-file`}
        onChange={(e) => {
          const file = e.target.files?.[0];
          // Cleared, so choosing the same file again still fires a change.
          e.target.value = "";
          if (file) onFile(file);
        }}
      />
    </>
  );
}
