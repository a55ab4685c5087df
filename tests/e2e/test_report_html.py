"""`perfmodel report`: the page's data against `diagnose`, the file's self-containment, and the
page itself opened in headless Chromium (slow: no console error, no request, the right
numbers in the key elements, a screenshot of every section under build/report-screenshots/).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.report.html import application_page, render_html, write_html
from perfmodel.report.html.timeline import assign_lanes, build_timeline, timeline_rows
from tests.cli_runner import invoke_cli
from tests.headless_chromium import Browser, chromium_path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "eventlogs" / "etl-local2.zstd"
SHARED = REPO.parent / "shared" / "data" / "eventlogs"
FAILURES = SHARED / "tasks_executors_fail_compressed_eventlog.zstd"
ROLLING = SHARED / "eventlog_v2_local-1623876083964"
SCREENSHOTS = REPO / "build" / "report-screenshots"
MAX_PAGE_BYTES = 3 * 1024 * 1024


def _shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared event logs not found at {path}")
    return path


def _damaged_copy(tmp: Path) -> Path:
    """The example log with a garbage line in the middle and its last line cut."""
    raw = zstandard.ZstdDecompressor().stream_reader(EXAMPLE.open("rb")).read()
    lines = raw.split(b"\n")
    lines.insert(len(lines) // 2, b'{"Event": "SparkListenerTaskEnd", garbage')
    out = tmp / "damaged-eventlog"
    out.write_bytes(b"\n".join(lines)[:-200])
    return out


# --- lanes and downsampling -------------------------------------------------------------


def _max_overlap(spans: list[tuple[float, float]]) -> int:
    """Most tasks running at once (an end at t frees the slot for a start at t; a task that
    took no time still needed a slot)."""
    points = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    best = running = 0
    for _, step in points:
        running += step
        best = max(best, running)
    return max(best, 1) if spans else 0


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "driver"]),
            st.integers(0, 1000),
            st.integers(1, 300),  # zero-length tasks make "at once" ill-defined
        ),
        max_size=60,
    )
)
def test_lanes_never_overlap_and_are_as_few_as_the_busiest_moment(tasks) -> None:
    rows = [(ex, float(a), float(a + d), 0, 0, i, "SUCCESS") for i, (ex, a, d) in enumerate(tasks)]
    lanes, counts = assign_lanes(rows)
    for executor in {r[0] for r in rows}:
        mine = [(r, lanes[i]) for i, r in enumerate(rows) if r[0] == executor]
        assert counts[executor] == _max_overlap([(r[1], r[2]) for r, _ in mine])
        by_lane: dict[int, list[tuple[float, float]]] = {}
        for r, lane in mine:
            by_lane.setdefault(lane, []).append((r[1], r[2]))
        for spans in by_lane.values():
            spans.sort()
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_downsampled_timeline_keeps_every_task_and_the_span_of_each_lane() -> None:
    profile = perfmodel.load(_shared(FAILURES), code_vectors=False).profile
    rows = timeline_rows(profile)
    full = build_timeline(profile, rows=rows)
    small = build_timeline(profile, max_bars=800, rows=rows)
    assert not full.merged and len(full.bars["lane"]) == len(rows) == full.tasks
    # 230 stages on 23 lanes: under 800 bars only when bars may span stages.
    assert small.merged and len(small.bars["lane"]) <= 800
    assert max(small.bars["stages"]) > 1
    assert sum(small.bars["tasks"]) == len(rows)
    assert sum(small.bars["failed"]) == sum(1 for r in rows if r[6] != "SUCCESS")
    for timeline in (full, small):
        first: dict[int, float] = {}
        last: dict[int, float] = {}
        for lane, a, b in zip(*(timeline.bars[k] for k in ("lane", "start", "end")), strict=True):
            first[lane] = min(first.get(lane, a), a)
            last[lane] = max(last.get(lane, b), b)
        if timeline is full:
            expected = (first, last)
        else:
            assert (first, last) == expected
    # Lanes per executor: as many as it ran tasks at once.
    for info in full.executors:
        spans = [(r[1], r[2]) for r in rows if r[0] == info["id"]]
        if spans:
            assert info["lanes"] == _max_overlap(spans)


# --- the page's data and file ------------------------------------------------------------


def _card(page_json: dict, key: str) -> dict:
    (summary,) = [s for s in page_json["sections"] if s["id"] == "summary"]
    (card,) = [c for c in summary["data"]["cards"] if c["key"] == key]
    return card


def test_page_data_says_what_diagnose_says() -> None:
    analysis = perfmodel.load(EXAMPLE)
    d = analysis.diagnose()
    page = application_page(analysis).to_json()
    json.dumps(page, allow_nan=False)  # strict JSON
    assert _card(page, "stages")["value"] == len(d.stages)
    assert _card(page, "duration")["value"] == f"{d.duration_s:.1f} s"
    assert _card(page, "tasks")["value"] == d.tasks
    sections = {s["id"]: s for s in page["sections"]}
    assert sections["findings"]["data"]["items"] == d.findings
    alerts = sections["alerts"]["data"]["items"]
    assert alerts == ([a["text"] for a in d.alerts] or ["No alert for this log."])
    assert sections["dag"]["data"]["critical"] == d.critical_path
    nodes = sections["dag"]["data"]["nodes"]
    assert {n["id"] for n in nodes if n["critical"]} == set(d.critical_path)
    whatif = sections["whatif"]["data"]
    assert whatif["advice"] == [a["text"] for a in d.advice]
    cores = next(c for c in whatif["curves"] if c["axis"] == "cores")
    observed = cores["observed"]
    assert observed["y"] == d.duration_s
    # The sweep's point at the observed cores is the baseline replay itself.
    assert cores["predicted_s"][cores["x"].index(observed["x"])] == pytest.approx(
        observed["replay"], rel=1e-9
    )
    assert "quality" not in sections  # a clean log has no data-quality section


def test_html_is_self_contained_and_small(tmp_path: Path) -> None:
    out = write_html(application_page(perfmodel.load(EXAMPLE)), tmp_path / "r.html")
    text = out.read_text(encoding="utf-8")
    assert out.stat().st_size <= MAX_PAGE_BYTES
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=", text, re.I)
    assert not re.search(r"<link[^>]*href=", text, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?https?:", text)
    assert "default-src 'none'" in text  # and the page may not fetch anything at all
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]  # no temporary file left
    # Page data cannot end its <script> element early.
    data = text.split("id='page-data'>", 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["title"]


def test_cli_writes_the_report_and_refuses_a_missing_log(tmp_path: Path) -> None:

    out = tmp_path / "sub" / "report.html"
    result = invoke_cli(["report", str(EXAMPLE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    missing = invoke_cli(["report", str(tmp_path / "nope"), "-o", str(out)])
    assert missing.exit_code == 2
    assert missing.output.startswith("error: ") and "Traceback" not in missing.output


def test_damaged_log_gets_a_data_quality_section(tmp_path: Path) -> None:
    analysis = perfmodel.load(_damaged_copy(tmp_path))
    d = analysis.diagnose()
    sections = {s.id: s for s in application_page(analysis).sections}
    quality = sections["quality"].data
    assert quality["problems_total"] == len(d.problems) > 0
    assert quality["counts"] == {k: v for k, v in d.data_quality["counts"].items() if v}


# --- in the browser ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the module's pages, each opened in place of the one before."""
    if chromium_path() is None:
        pytest.fail("chromium is not installed: `make install` installs Debian's chromium")
    with Browser() as shared:
        yield shared


def _check_in_browser(name: str, source: Path, tmp_path: Path, browser: Browser) -> None:
    analysis = perfmodel.load(source)
    d = analysis.diagnose()
    page = application_page(analysis)
    html_path = tmp_path / f"{name}.html"
    html_path.write_text(render_html(page), encoding="utf-8")
    assert html_path.stat().st_size <= MAX_PAGE_BYTES
    shots = SCREENSHOTS / name
    shutil.rmtree(shots, ignore_errors=True)
    browser.open(html_path)
    browser.wait_for("document.body && document.body.dataset.ready === '1'", timeout=180)
    assert browser.problems() == []

    def text(selector: str) -> str:
        return browser.evaluate(f"document.querySelector({json.dumps(selector)}).textContent")

    assert text("[data-key=stages] .value") == str(len(d.stages))
    assert text("[data-key=duration] .value") == f"{d.duration_s:.1f} s"
    assert text("[data-key=tasks] .value") == str(d.tasks)
    assert text("[data-key=jobs] .value") == str(d.jobs)
    drawn_critical = browser.evaluate(
        "[...document.querySelectorAll('#dag-svg .dag-node.critical')].map(n => +n.dataset.stage)"
    )
    assert sorted(drawn_critical) == sorted(set(d.critical_path))
    findings = browser.evaluate(
        "[...document.querySelectorAll('#findings-items li')].map(li => li.textContent)"
    )
    assert findings == d.findings
    bars = browser.evaluate("document.getElementById('timeline-plot').data[0].x.length")
    timeline = next(s for s in page.sections if s.id == "timeline").data
    assert bars == len(timeline["bars"]["lane"])
    assert sum(timeline["bars"]["tasks"]) == sum(
        1 for s in analysis.profile.stages.values() for t in s.tasks if t.finish_ms is not None
    )
    # Clicking a stage in the DAG shows its detail.
    if d.critical_path:
        target = d.critical_path[0]
        browser.evaluate(
            f"document.querySelector('#dag-svg .dag-node[data-stage=\"{target}\"]')"
            ".dispatchEvent(new MouseEvent('click', {bubbles: true}))"
        )
        shown = browser.evaluate("document.getElementById('stage-detail').dataset.stage")
        assert shown.split(".")[0] == str(target)
    sections = browser.evaluate("[...document.querySelectorAll('section')].map(s => s.id)")
    assert {"summary", "timeline", "dag", "stages", "whatif", "findings"} <= set(sections)
    assert ("flame" in sections) == (analysis.samples is not None and bool(analysis.samples.stages))
    damaged = d.data_quality.get("damaged") or bool(d.problems)
    assert ("quality" in sections) == damaged
    if damaged:
        shown_counts = browser.evaluate(
            "Object.fromEntries([...document.querySelectorAll('#quality-table tr[data-key]')]"
            ".map(r => [r.dataset.key, +r.cells[1].textContent]))"
        )
        counts = d.data_quality.get("counts", {})
        assert shown_counts == {k: v for k, v in counts.items() if v}
    if "flame" in sections:
        assert browser.evaluate("document.querySelectorAll('#flame-graph rect').length") > 1
    for section in sections:
        shot = browser.screenshot(f"#{section}", shots / f"{section}.png")
        assert shot.stat().st_size > 1000
    assert browser.problems() == []


@pytest.mark.slow
def test_example_in_browser(tmp_path: Path, browser: Browser) -> None:
    _check_in_browser("example", EXAMPLE, tmp_path, browser)


@pytest.mark.slow
def test_failures_log_in_browser(tmp_path: Path, browser: Browser) -> None:
    _check_in_browser("failures", _shared(FAILURES), tmp_path, browser)


@pytest.mark.slow
def test_rolling_log_in_browser(tmp_path: Path, browser: Browser) -> None:
    _check_in_browser("rolling", _shared(ROLLING), tmp_path, browser)


@pytest.mark.slow
def test_damaged_log_in_browser(tmp_path: Path, browser: Browser) -> None:
    _check_in_browser("damaged", _damaged_copy(tmp_path), tmp_path, browser)


@pytest.mark.slow
def test_recorded_bundle_in_browser(job_bundle: Path, tmp_path: Path, browser: Browser) -> None:
    _check_in_browser("bundle", job_bundle, tmp_path, browser)
