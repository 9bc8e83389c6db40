import { t } from "../i18n";

const LEVELS = [1, 2, 3, 4, 5] as const;

/** Importance 1-5 as stars; clickable when `onChange` is given. */
export function ImportanceStars({ value, onChange }: { value: number; onChange?: (value: number) => void }) {
  const label = `${t.memories.importance} ${value}`;
  if (!onChange) {
    return (
      <span className="stars" title={label} aria-label={label} data-importance={value}>
        {LEVELS.map((level) => (level <= value ? "★" : "☆")).join("")}
      </span>
    );
  }
  return (
    <span className="stars editable" role="radiogroup" aria-label={t.memories.importance} data-importance={value}>
      {LEVELS.map((level) => (
        <button
          key={level}
          type="button"
          role="radio"
          aria-checked={level === value}
          aria-label={`${t.memories.importance} ${level}`}
          className={level <= value ? "on" : "off"}
          onClick={() => onChange(level)}
          data-testid={`importance-${level}`}
        >
          {level <= value ? "★" : "☆"}
        </button>
      ))}
    </span>
  );
}
