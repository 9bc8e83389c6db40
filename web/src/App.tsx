import type { ReactNode } from "react";
import { BrowserRouter, Navigate, Route, Routes, useLocation } from "react-router-dom";
import { AuthProvider, useAuth } from "./auth";
import { Layout } from "./components/Layout";
import { t } from "./i18n";
import { AgentFormPage } from "./pages/AgentFormPage";
import { AgentListPage } from "./pages/AgentListPage";
import { ChatPage } from "./pages/ChatPage";
import { LoginPage } from "./pages/LoginPage";
import { MemoryPage } from "./pages/MemoryPage";

function RequireAuth({ children }: { children: ReactNode }) {
  const { token } = useAuth();
  const location = useLocation();
  if (!token) return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  return <Layout>{children}</Layout>;
}

export function App() {
  return (
    <AuthProvider>
      <BrowserRouter>
        <Routes>
          <Route path="/login" element={<LoginPage mode="login" />} />
          <Route path="/signup" element={<LoginPage mode="signup" />} />
          <Route path="/" element={<RequireAuth><AgentListPage /></RequireAuth>} />
          <Route path="/agents/new" element={<RequireAuth><AgentFormPage /></RequireAuth>} />
          <Route path="/agents/:agentId/edit" element={<RequireAuth><AgentFormPage /></RequireAuth>} />
          <Route path="/agents/:agentId/chat" element={<RequireAuth><ChatPage /></RequireAuth>} />
          <Route path="/agents/:agentId/memories" element={<RequireAuth><MemoryPage /></RequireAuth>} />
          <Route path="*" element={<p className="empty">{t.errors.notFound}</p>} />
        </Routes>
      </BrowserRouter>
    </AuthProvider>
  );
}
