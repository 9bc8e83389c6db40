"""OpenAI-compatible API: POST /v1/chat/completions and GET /v1/models over memchat's own turn."""
