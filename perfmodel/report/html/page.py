"""One self-contained HTML file from a `Page`: data, script, style and plotly.js inlined.

Nothing on the page is fetched: the report is read offline, mailed, attached to tickets, so
plotly.js (package data: plotly's own "basic" bundle, vendored, see ``assets/``) and our own
script and style are copied into it, and the page data is a JSON ``<script>`` block that our
script draws from. Fonts are the system's (no web fonts to inline).
"""

from __future__ import annotations

import html
import json
from functools import cache
from pathlib import Path

from perfmodel.atomic import write_atomically
from perfmodel.errors import PerfmodelError
from perfmodel.report.html.data import Page

ASSETS = Path(__file__).with_name("assets")


PLOTLY_JS = ASSETS / "plotly-basic.min.js"
"""plotly.js's "basic" bundle (npm's ``plotly.js-basic-dist-min``, MIT licence beside it):
the scatter and bar traces the report draws, 1.2 MB, where the full bundle is 4.8 MB. Every
report inlines it, so this is most of an HTML report's size and of a browser's time to open
one."""


class ReportAssetError(PerfmodelError):
    """plotly.js is missing: a damaged installation."""


@cache
def plotly_js() -> str:
    """The minified plotly.js beside our own script."""
    if not PLOTLY_JS.is_file():
        raise ReportAssetError(
            f"plotly.js is missing from this installation ({PLOTLY_JS}): reinstall perfmodel"
        )
    return PLOTLY_JS.read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """Text that cannot close the ``<script>`` element it is inlined into."""
    return text.replace("</", "<\\/")


def render_html(page: Page) -> str:
    data = json.dumps(page.to_json(), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    css = (ASSETS / "report.css").read_text(encoding="utf-8")
    script = (ASSETS / "report.js").read_text(encoding="utf-8")
    return "".join(
        [
            "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>",
            "<meta name='viewport' content='width=device-width, initial-scale=1'>",
            # No network at all: a report that worked offline must not start fetching later.
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
            "img-src data: blob:; font-src data:; connect-src 'none'\">",
            f"<title>perfmodel · {html.escape(page.title)}</title>",
            f"<style>{css}</style>",
            f"<script>{_script_safe(plotly_js())}</script>",
            "</head><body>",
            f"<script type='application/json' id='page-data'>{_script_safe(data)}</script>",
            f"<script>{_script_safe(script)}</script>",
            "</body></html>\n",
        ]
    )


def write_html(page: Page, out: Path) -> Path:
    """Write the page atomically: a reader never sees half a report."""
    out = Path(out)
    write_atomically(out, render_html(page))
    return out
