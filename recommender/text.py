"""Text clean-up shared by every reader: Unicode, whitespace, stray LaTeX, matching keys."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

_LATEX_HINT = re.compile(r"[\\$]")
_DOTLESS_I_ACCENT = re.compile("\u0131(?=[\u0300-\u036f])")
_FONTS = "mathcal|mathscr|mathfrak|mathrm|mathbf|mathbb|mathit|mathsf|mathtt|texttt|textbf|textit|textrm|textsf|emph"
_FONT_MACRO_BRACED = re.compile(rf"\\(?:{_FONTS}|boldsymbol|operatorname)\s*\{{")
_FONT_MACRO_GLUED = re.compile(rf"\\(?:{_FONTS})(?=[A-Z0-9\[(]|[^\x00-\x7f])")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
DERIVED_TITLE_WORDS = 12


@lru_cache(maxsize=1)
def _latex_converter():  # pylatexenc is imported lazily: most text has no LaTeX at all
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces=True)


def strip_latex(text: str) -> str:
    """Render stray LaTeX ("$n^{1.5}$", "{B}ayesian", "\\emph{x}") as plain Unicode text."""
    if not _LATEX_HINT.search(text):
        # Only BibTeX case-protecting braces ("{B}ayesian"): no parser needed, and most text is this.
        return text.replace("{", "").replace("}", "") if "{" in text else text
    protected = _repair_latex(re.sub(r"(?<!\\)([%&])", r"\\\1", text))  # comment/alignment in LaTeX
    try:
        return _latex_converter().latex_to_text(protected)
    except Exception:  # noqa: BLE001 - pylatexenc raises many kinds; keep the raw text then
        return text


def _repair_latex(text: str) -> str:
    """Fix what scraped titles do to LaTeX before rendering it.

    Font macros become their plain argument, also when the braces were lost on the way
    ("$\\mathcalVista\\mathcalDPO$" → "VistaDPO"; pylatexenc would print script letters or
    nothing), and a lone dollar before a digit is money ("Earn $1 Million"), not math.
    """
    text = _FONT_MACRO_BRACED.sub("{", text)
    text = _FONT_MACRO_GLUED.sub("", text)
    if len(re.findall(r"(?<!\\)\$", text)) % 2:
        text = re.sub(r"(?<!\\)\$(?=\d)", r"\\$", text)
    return text


def clean_text(text: str | None, *, latex: bool = True) -> str:
    """NFC-normalise, repair TeX accent leftovers ("Rodrı́guez"), drop LaTeX, squeeze spaces."""
    if not text:
        return ""
    if not text.isascii():  # most titles are plain ASCII: skip the Unicode passes for them
        text = _DOTLESS_I_ACCENT.sub("i", unicodedata.normalize("NFD", text))
        text = unicodedata.normalize("NFC", text)
    if latex:
        text = strip_latex(text)
    return " ".join(text.split())


def title_key(title: str) -> str:
    """A matching key for titles: lower-case ASCII letters and digits only."""
    folded = unicodedata.normalize("NFKD", clean_text(title)).encode("ascii", "ignore").decode()
    return _NON_ALNUM.sub("", folded.lower())


def doi_key(doi: str) -> str:
    """A matching key for DOIs: lower-case, without a resolver prefix."""
    doi = doi.strip().lower()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if doi.startswith(prefix):
            doi = doi[len(prefix) :]
    return doi.strip()


def url_key(url: str) -> str:
    """A matching key for URLs: no scheme, no 'www.', no trailing slash."""
    url = url.strip().lower()
    url = re.sub(r"^https?://(www\.)?", "", url)
    return url.rstrip("/")


def text_id(text: str, prefix: str = "abs") -> str:
    """A stable id derived from normalised text (same abstract → same id, across files)."""
    digest = hashlib.sha256(title_key(text).encode()).hexdigest()[:12]
    return f"{prefix}-{digest}"


def derived_title(abstract: str, words: int = DERIVED_TITLE_WORDS) -> str:
    """A readable stand-in title for an untitled abstract: its first sentence, cut to a few words."""
    first = _SENTENCE_END.split(abstract, maxsplit=1)[0].rstrip(".")
    tokens = first.split()
    if len(tokens) <= words:
        return " ".join(tokens)
    return " ".join(tokens[:words]) + " …"
