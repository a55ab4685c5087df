"""`perfmodel report`: one self-contained HTML page per application (or experiment).

``data`` builds the page as plain data from the facade's answers, ``timeline`` lays out
the tasks, ``page`` inlines everything into one file. See docs/report.md.
"""

from perfmodel.report.html.data import Page, Section, application_page
from perfmodel.report.html.page import render_html, write_html

__all__ = ["Page", "Section", "application_page", "render_html", "write_html"]
