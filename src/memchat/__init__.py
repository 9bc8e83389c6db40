"""memchat: a self-hostable chat-agent server."""

from importlib.metadata import version

# The installed distribution's version (pyproject.toml): the API's and the MCP server's.
__version__ = version("memchat")
