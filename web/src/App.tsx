import type { ReactNode } from "react";
import { BrowserRouter, Navigate, Route, Routes, useLocation } from "react-router-dom";
import { AuthProvider, useAuth } from "./auth";
import { Layout } from "./components/Layout";
import { AccountPage } from "./pages/AccountPage";
import { AgentFormPage } from "./pages/AgentFormPage";
import { AgentListPage } from "./pages/AgentListPage";
import { ChatPage } from "./pages/ChatPage";
import { LoginPage } from "./pages/LoginPage";
import { ApiKeysPage } from "./pages/ApiKeysPage";
import { MemoryPage } from "./pages/MemoryPage";
import { NotFoundPage } from "./pages/NotFoundPage";

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
          <Route path="/account" element={<RequireAuth><AccountPage /></RequireAuth>} />
          <Route path="/keys" element={<RequireAuth><ApiKeysPage /></RequireAuth>} />
          <Route path="*" element={<RequireAuth><NotFoundPage /></RequireAuth>} />
        </Routes>
      </BrowserRouter>
    </AuthProvider>
  );
}
