"""Importing an existing conversation as an agent's history (POST /api/agents/{id}/import)."""
