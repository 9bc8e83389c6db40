import { useEffect } from "react";
import { Link } from "react-router-dom";
import { deleteAgent, listAgents } from "../api/agents";
import type { Agent } from "../api/types";
import { ConfirmButton } from "../components/ConfirmButton";
import { ErrorBanner } from "../components/ErrorBanner";
import { onTurnFinished } from "../events";
import { formatTime } from "../format";
import { t } from "../i18n";
import { useResource } from "../useResource";

export function AgentListPage() {
  const agents = useResource("agents", listAgents);
  const { reload } = agents;

  useEffect(() => onTurnFinished(() => void reload()), [reload]);

  return (
    <section className="page">
      <div className="page-header">
        <h1>{t.agents.title}</h1>
        <Link to="/agents/new" className="button primary" data-testid="create-agent">
          {t.agents.create}
        </Link>
      </div>
      <ErrorBanner error={agents.error} onRetry={() => void reload()} />
      {agents.loading && !agents.data ? <p className="muted">{t.common.loading}</p> : null}
      {agents.data?.length === 0 ? <p className="empty">{t.agents.empty}</p> : null}
      <ul className="agent-list" data-testid="agent-list">
        {agents.data?.map((agent) => (
          <AgentCard
            key={agent.id}
            agent={agent}
            onDelete={async () => {
              await deleteAgent(agent.id);
              agents.setData((list) => list?.filter((a) => a.id !== agent.id));
            }}
          />
        ))}
      </ul>
    </section>
  );
}

function AgentCard({ agent, onDelete }: { agent: Agent; onDelete: () => Promise<void> }) {
  return (
    <li className="card agent-card" data-testid="agent-card" data-agent-id={agent.id}>
      <Link to={`/agents/${agent.id}/chat`} className="agent-main">
        <div className="agent-title">
          <span className="agent-name">{agent.name}</span>
          {agent.handle ? <span className="agent-handle">{agent.handle}</span> : null}
          {agent.profile.relationship ? (
            <span className="tag" title={t.agents.relationship}>
              {agent.profile.relationship}
            </span>
          ) : null}
        </div>
        <div className="agent-preview">
          <span className="preview-text" data-testid="agent-preview">
            {agent.latestMessage ?? t.agents.noReply}
          </span>
          <time className="muted">{formatTime(agent.latestMessageAtMs)}</time>
        </div>
      </Link>
      <div className="agent-actions">
        <Link to={`/agents/${agent.id}/chat`}>{t.agents.chat}</Link>
        <Link to={`/agents/${agent.id}/memories`}>{t.agents.memories}</Link>
        <Link to={`/agents/${agent.id}/edit`}>{t.common.edit}</Link>
        <ConfirmButton question={t.agents.deleteConfirm(agent.name)} onConfirm={onDelete} testId="delete-agent" />
      </div>
    </li>
  );
}
