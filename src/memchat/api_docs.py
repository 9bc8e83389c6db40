"""/docs (Swagger UI) and /redoc with their assets served from the installed packages, never a CDN.

FastAPI's own pages load Swagger UI and ReDoc from jsDelivr (and ReDoc's fonts from Google), so
they are blank offline. The same pages here point at /docs/assets/, which serves the files that the
pinned `fastapi-offline` wheel ships (Swagger UI 5, which reads OpenAPI 3.1, and ReDoc 2): a plain
`pip install` is enough, no console build and no network.
"""

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

ASSETS_URL = "/docs/assets"
ASSET_NAMES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")
# Swagger UI would otherwise ask validator.swagger.io about the spec of a non-local host.
SWAGGER_UI_PARAMETERS = {"validatorUrl": None}
# ReDoc's sidebar footer always loads Redocly's logo from cdn.redoc.ly, with no option to stop it.
# Images from this server only: the browser never asks, the image fails and ReDoc drops it.
REDOC_CSP = "img-src 'self' data: blob:"


def assets_dir() -> Path:
    return Path(str(files("fastapi_offline") / "static"))


def install_api_docs(app: FastAPI, docs_url: str = "/docs", redoc_url: str = "/redoc") -> None:
    """For an app created with docs_url=None and redoc_url=None."""
    openapi_url = app.openapi_url or "/openapi.json"
    oauth2_redirect_url = f"{docs_url}/oauth2-redirect"
    app.mount(ASSETS_URL, StaticFiles(directory=assets_dir()), name="api-docs-assets")

    @app.get(docs_url, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=f"{root}{oauth2_redirect_url}",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
        )

    @app.get(oauth2_redirect_url, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(redoc_url, include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_redoc_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
        page.headers["Content-Security-Policy"] = REDOC_CSP
        return page
