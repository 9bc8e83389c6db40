import { useState, type FormEvent } from "react";
import { useNavigate, useParams } from "react-router-dom";
import { createAgent, getAgent, updateAgent } from "../api/agents";
import { isNotFound } from "../api/errors";
import type { Agent, AgentProfile } from "../api/types";
import { ErrorBanner } from "../components/ErrorBanner";
import { t } from "../i18n";
import { useResource } from "../useResource";
import { NotFoundPage } from "./NotFoundPage";

const PROFILE_FIELDS: readonly (keyof AgentProfile)[] = [
  "status",
  "lastActive",
  "relationship",
  "headline",
  "topic",
  "chemistryLabel",
  "chemistry",
  "rhythm",
  "profileNote",
];

const EMPTY_PROFILE: AgentProfile = {
  status: "",
  lastActive: "",
  relationship: "",
  headline: "",
  topic: "",
  chemistryLabel: "",
  chemistry: "",
  rhythm: "",
  profileNote: "",
};

/** 心动值 is a number to a person: 0 to 100, stored as text like every profile field. */
const CHEMISTRY_INPUT = {
  inputMode: "numeric",
  pattern: "100|[1-9]?[0-9]",
  title: t.agentForm.chemistryRange,
} as const;

export function AgentFormPage() {
  const { agentId } = useParams();
  const agent = useResource(`agent:${agentId ?? "new"}`, () =>
    agentId ? getAgent(agentId) : Promise.resolve(null),
  );
  if (isNotFound(agent.error)) return <NotFoundPage />;
  if (agent.error) return <ErrorBanner error={agent.error} onRetry={() => void agent.reload()} />;
  if (agent.loading) return <p className="muted">{t.common.loading}</p>;
  return <AgentForm key={agentId ?? "new"} agent={agent.data ?? null} />;
}

function AgentForm({ agent }: { agent: Agent | null }) {
  const navigate = useNavigate();
  const [name, setName] = useState(agent?.name ?? "");
  const [handle, setHandle] = useState(agent?.handle ?? "");
  const [defaultPrompt, setDefaultPrompt] = useState(agent?.defaultPrompt ?? "");
  const [profile, setProfile] = useState<AgentProfile>(agent?.profile ?? EMPTY_PROFILE);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = { name: name.trim(), handle: handle.trim(), defaultPrompt: defaultPrompt.trim() || null, profile };
    try {
      if (agent) {
        await updateAgent(agent.id, body);
        navigate("/");
      } else {
        const created = await createAgent(body);
        navigate(`/agents/${created.id}/chat`);
      }
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <section className="page narrow">
      <h1>{agent ? t.agentForm.editTitle : t.agentForm.createTitle}</h1>
      <form className="card form" onSubmit={submit} data-testid="agent-form">
        <label>
          {t.agentForm.name}
          <input name="name" required value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          {t.agentForm.handle}
          <input name="handle" value={handle} onChange={(e) => setHandle(e.target.value)} />
        </label>
        <label>
          {t.agentForm.defaultPrompt}
          <textarea
            name="defaultPrompt"
            rows={4}
            value={defaultPrompt}
            placeholder={t.agentForm.defaultPromptHint}
            onChange={(e) => setDefaultPrompt(e.target.value)}
          />
        </label>
        <fieldset>
          <legend>{t.agentForm.profileTitle}</legend>
          <p className="muted form-intro">{t.agentForm.profileIntro}</p>
          <div className="profile-grid">
            {PROFILE_FIELDS.map((field) => (
              <label key={field} className={field === "profileNote" ? "wide" : undefined}>
                {t.agentForm.profile[field]}
                {field === "profileNote" ? (
                  <textarea
                    name={`profile.${field}`}
                    rows={2}
                    value={profile[field]}
                    aria-describedby={`hint-${field}`}
                    onChange={(e) => setProfile({ ...profile, [field]: e.target.value })}
                  />
                ) : (
                  <input
                    name={`profile.${field}`}
                    value={profile[field]}
                    aria-describedby={`hint-${field}`}
                    {...(field === "chemistry" ? CHEMISTRY_INPUT : {})}
                    onChange={(e) => setProfile({ ...profile, [field]: e.target.value })}
                  />
                )}
                <span className="field-hint" id={`hint-${field}`} data-testid={`hint-${field}`}>
                  {t.agentForm.profileHints[field]}
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        <ErrorBanner error={error} />
        <div className="form-actions">
          <button type="button" onClick={() => navigate("/")}>
            {t.common.cancel}
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {agent ? t.agentForm.submitEdit : t.agentForm.submitCreate}
          </button>
        </div>
      </form>
    </section>
  );
}
