import { MEMORY_TYPES, type MemoryType } from "../api/types";
import { t } from "../i18n";

export function MemoryTypeSelect({
  value,
  onChange,
  name,
}: {
  value: MemoryType;
  onChange: (value: MemoryType) => void;
  name?: string;
}) {
  return (
    <select name={name} value={value} onChange={(e) => onChange(e.target.value as MemoryType)} aria-label={t.memories.type}>
      {MEMORY_TYPES.map((option) => (
        <option key={option} value={option}>
          {t.memoryTypes[option]}
        </option>
      ))}
    </select>
  );
}
