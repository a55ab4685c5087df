"""The HTML renderer and its pages: one self-contained HTML file per application (`perfmodel
report`), per accuracy report (``experiment report --html``) and per fleet (summary.html).

``data`` builds the application page as plain data from the facade's answers, ``timeline``
lays out the tasks, ``accuracy`` is the accuracy report's page of the same kinds, ``page``
inlines everything into one file; ``fleet`` is the fleet's script-free page. See
docs/report.md.
"""

from perfmodel.report.html.data import Page, Section, application_page
from perfmodel.report.html.page import render_html, write_html
from perfmodel.report.html.renderer import HtmlRenderer

__all__ = ["HtmlRenderer", "Page", "Section", "application_page", "render_html", "write_html"]
