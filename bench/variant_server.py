"""memchat served as `memchat serve` does, with one of bench.variants applied (no probes).

python -m bench.variant_server --variant fast-upstream --port 18093
"""

import argparse

import uvicorn

from bench.variants import VARIANTS, apply
from memchat.app import create_app
from memchat.settings import Settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18093)
    parser.add_argument("--variant", choices=sorted(VARIANTS), required=True)
    args = parser.parse_args()
    apply(args.variant)
    settings = Settings()
    settings.database.migrate_on_start = True
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="warning", proxy_headers=False)


if __name__ == "__main__":
    main()
