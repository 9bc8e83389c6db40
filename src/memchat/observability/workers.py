"""The shared metrics directory of `memchat serve --workers N`, made before prometheus_client is
imported (it decides at import whether values go to files there)."""

import os
import tempfile

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def prepare_metrics_dir() -> str:
    """PROMETHEUS_MULTIPROC_DIR for the workers: the operator's, or a fresh one of this run,
    emptied (values of a previous run must not add up)."""
    path = os.environ.get(MULTIPROC_ENV) or tempfile.mkdtemp(prefix="memchat-metrics-")
    os.makedirs(path, exist_ok=True)
    for name in os.listdir(path):
        if name.endswith(".db"):
            os.unlink(os.path.join(path, name))
    os.environ[MULTIPROC_ENV] = path
    return path
