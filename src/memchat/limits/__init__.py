"""Limits: the chat rate limit and the login throttle (in process or in Redis), and the request guards."""
