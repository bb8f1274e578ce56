"""Text from a corpus or a library made safe for the page it lands on: links, Markdown, HTML.

Everything a corpus or a library holds is untrusted (a shared .bib, a corpus someone else built): a link is
kept only when it is http(s) with a host, Markdown and HTML special characters are escaped, control
characters and bidi overrides are removed (`recommender.formats.output.safe_text`, the one rule for every
output), and CSV cells go through `recommender.formats.output.spreadsheet_safe`.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote, urlsplit

from recommender.formats.output import safe_text

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~&])")
_LINE_START = re.compile(r"^(\d*)([-+.)])")
_CONTROL = re.compile("[\\s\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def safe_url(url: object) -> str | None:
    """`url` when it is an http or https link with a host (no spaces, control characters — C1 included, as it
    goes raw into a terminal's OSC 8 link — bidi overrides or non-characters), else None."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url or _CONTROL.search(url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return url


def markdown_text(text: object) -> str:
    """Literal text in Markdown: every character Markdown or inline HTML would act on is escaped."""
    flat = _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(safe_text(text or "").split()))
    return _LINE_START.sub(r"\1\\\2", flat)  # '- x', '+ x', '1. x' would start a list on their own line


def markdown_link(text: object, url: object) -> str:
    """[text](url) when the url is safe (parentheses and spaces encoded), else the escaped text alone."""
    label = markdown_text(text)
    link = safe_url(url)
    if link is None:
        return label
    return f"[{label}]({quote(link, safe=':/?#@!$&*+,;=%~._-')})"


def html_text(text: object) -> str:
    """Literal text in HTML: escaped, without control characters or bidi overrides."""
    return html.escape(safe_text(text or ""), quote=True)


def html_link(text: object, url: object, **attributes: str) -> str:
    """<a href> for a safe url (rel=noopener), else the escaped text."""
    label = html_text(text)
    link = safe_url(url)
    if link is None:
        return label
    extra = "".join(f' {name}="{html_text(value)}"' for name, value in attributes.items())
    return f'<a href="{html_text(link)}" rel="noopener noreferrer"{extra}>{label}</a>'
