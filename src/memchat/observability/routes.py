"""GET /metrics: the Prometheus exposition, behind a bearer token when MEMCHAT_METRICS_TOKEN is set."""

import hmac

from fastapi import FastAPI, Request
from starlette.responses import JSONResponse, Response

from memchat.observability import metrics


def install_metrics_route(app: FastAPI, enabled: bool, token: str | None) -> None:
    expected = f"Bearer {token}".encode() if token else None

    @app.get("/metrics", tags=["health"], include_in_schema=False)
    async def scrape(request: Request) -> Response:
        if not enabled:  # a 404 of its own: the console's catch-all route would answer a page
            return JSONResponse({"error": {"code": "not_found", "message": "metrics are off"}}, status_code=404)
        if expected is not None:
            given = request.headers.get("authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                return JSONResponse(
                    {"error": {"code": "unauthorized", "message": "/metrics needs its bearer token"}},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
        body, content_type = metrics.scrape()
        return Response(body, media_type=content_type)
