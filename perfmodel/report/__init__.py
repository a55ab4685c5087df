"""Renderers: every result perfmodel computes, as text, Markdown, JSON, HTML or speedscope.

The layer just below the CLI. A command computes its result through the library and renders
it with the format it picks (``--json`` → ``json``, else ``text``; ``report`` → ``html``;
``flame`` → ``speedscope`` and the text form's collapsed stacks):

    renderer("json").diagnosis(perfmodel.load(log).diagnose(), sys.stdout)

`Renderer` (`perfmodel.report.base`) has one method per kind of result; each format's class
implements those it has a form for, and the others raise `UnsupportedFormatError`.
`render_to_file` writes a rendering into a file whole or not at all. Nothing here computes
a result: the diagnosis model is `perfmodel.analysis`, the searches and studies are
`recommend`, `fleet` and `experiment`.
"""

from importlib import import_module

from perfmodel.report.base import (
    KINDS,
    ProfileSource,
    Renderer,
    Stacks,
    UnknownFormatError,
    UnsupportedFormatError,
    render_to_file,
)

FORMATS: dict[str, str] = {
    "text": "perfmodel.report.text:TextRenderer",
    "markdown": "perfmodel.report.markdown:MarkdownRenderer",
    "json": "perfmodel.report.jsonrenderer:JsonRenderer",
    "html": "perfmodel.report.html:HtmlRenderer",
    "speedscope": "perfmodel.report.flame:SpeedscopeRenderer",
}
"""Every output format: its renderer class, imported when the format is first asked for
(the HTML renderer loads the whole analysis stack, which ``runs list --json`` need not)."""


def renderer(name: str) -> Renderer:
    """The renderer of format ``name`` (one of `FORMATS`)."""
    if name not in FORMATS:
        raise UnknownFormatError(f"no output format {name!r}: use one of {', '.join(FORMATS)}")
    module, _, cls = FORMATS[name].partition(":")
    made: Renderer = getattr(import_module(module), cls)()
    return made


__all__ = [
    "FORMATS",
    "KINDS",
    "ProfileSource",
    "Renderer",
    "Stacks",
    "UnknownFormatError",
    "UnsupportedFormatError",
    "render_to_file",
    "renderer",
]
