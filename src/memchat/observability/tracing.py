"""OpenTelemetry traces: off unless the standard OTEL_* variables ask for them.

With OTEL_TRACES_EXPORTER (otlp, console) or OTEL_EXPORTER_OTLP_ENDPOINT set, and OTEL_SDK_DISABLED
not true, the SDK exports memchat's spans (OTLP over HTTP by default; OTEL_SERVICE_NAME names the
service). Otherwise the API's no-op tracer makes every span a cheap stand-in.
"""

import logging
import os

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

log = logging.getLogger("memchat.tracing")

_provider: trace.TracerProvider = trace.NoOpTracerProvider()
tracer: trace.Tracer = _provider.get_tracer("memchat")


def wanted() -> bool:
    """Whether the environment turns tracing on."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(exporter) or bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def _exporter() -> SpanExporter:
    if os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "console":
        return ConsoleSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def setup_from_environment() -> None:
    """Once per process, at start: the SDK when the environment asks for it."""
    if not wanted() or isinstance(_provider, TracerProvider):
        return
    provider = TracerProvider(
        resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "memchat")})
    )
    provider.add_span_processor(BatchSpanProcessor(_exporter()))
    use_provider(provider)
    log.info("tracing on: spans go to %s", type(_exporter()).__name__)


def use_provider(provider: trace.TracerProvider) -> None:
    """memchat's spans go to this provider from now on (the SDK's, or a test's)."""
    global _provider, tracer
    _provider = provider
    tracer = provider.get_tracer("memchat")


def active() -> bool:
    """Whether spans are recorded (an SDK provider is in use)."""
    return not isinstance(_provider, trace.NoOpTracerProvider)


def flush() -> None:
    """Export what is buffered (an app stopping; the provider lives as long as the process)."""
    if isinstance(_provider, TracerProvider):
        _provider.force_flush()


def current_trace_id() -> str | None:
    """The current span's trace id as 32 hex digits, when a recorded span is current."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None
