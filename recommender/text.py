"""Text clean-up shared by every reader: Unicode, whitespace, stray LaTeX, matching keys."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

from recommender.scripts import letter_script, unread_script

_LATEX_HINT = re.compile(r"[\\$]")
_DOTLESS_I_ACCENT = re.compile("\u0131(?=[\u0300-\u036f])")
_FONTS = "mathcal|mathscr|mathfrak|mathrm|mathbf|mathbb|mathit|mathsf|mathtt|texttt|textbf|textit|textrm|textsf|emph"
_FONT_MACRO_BRACED = re.compile(rf"\\(?:{_FONTS}|boldsymbol|operatorname)\s*\{{")
_FONT_MACRO_GLUED = re.compile(rf"\\(?:{_FONTS})(?=[A-Z0-9\[(]|[^\x00-\x7f])")
_TILDE = re.compile(r"\\(?:widetilde|tilde)\s*(?:\{\s*([A-Za-z])\s*\}|([A-Za-z])\b)")
# Symbol macros take no argument, so LaTeX swallows the space after them ("\log B" → "logB");
# an empty group after the name keeps that space.
_SYMBOL_THEN_SPACE = re.compile(
    r"\\(log|ln|exp|sin|cos|tan|max|min|sup|inf|lim|det|arg|dim|ker|deg|gcd|Pr|ell|infty|cdot|cdots|ldots|"
    r"dots|times|in|notin|leq|geq|le|ge|neq|sim|approx|to|mid|pm|partial|nabla|forall|exists|"
    r"alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|iota|kappa|lambda|mu|nu|xi|pi|"
    r"rho|sigma|tau|upsilon|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Pi|Sigma|Phi|Psi|Omega)"
    r"(?=\s+[\w(\[])"
)
# Operator names a reader sees as words ("\\ln\\ln T" is "ln ln T", "T\\log T" "T log T"), set apart from the
# letters beside them as TeX's own spacing does; a bracket or sub/superscript after them stays close: "ln(x)"
_OPERATOR_NAMES = ("log|ln|lg|exp|sin|cos|tan|cot|sinh|cosh|tanh|arcsin|arccos|arctan|max|min|sup|inf|lim|liminf|"
                   "limsup|det|arg|dim|ker|deg|gcd|Pr")
_OPERATOR = re.compile(rf"(?<=[A-Za-z0-9}}])(?=\\(?:{_OPERATOR_NAMES})(?![A-Za-z]))"  # a letter before: a space
                       rf"|(\\(?:{_OPERATOR_NAMES}))(?![A-Za-z])\s*(?=[A-Za-z0-9\\])")  # after: "{} " (TeX eats one)
# What needs the LaTeX renderer: inline math, and a macro with its braced arguments (two levels deep)
_BRACED = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"
_LATEX_SPAN = re.compile(
    rf"(?<!\\)\$\$?(?:[^$\\]|\\.)+?(?<!\\)\$\$?"  # $…$ (and $$…$$)
    rf"|\\(?:[A-Za-z]+\*?|[^A-Za-z\s])(?:\s*{_BRACED}|(?<=[\\][^A-Za-z])\s*[A-Za-z])*"  # \macro{…}, \'e
)
_MATH_TOKEN = re.compile(r"\\[A-Za-z]+|\\[{}]|[{}]|[^\\{}]+|\\.")
_ARGUMENT = re.compile(r"\\[A-Za-z]+\s*\{(?!\})")  # a macro given an argument ("\sqrt{k}"; "\log{}" is none)
_HTML_TAG = re.compile(r"</?(?:em|i|b|u|strong|sub|sup|br|p|span|code|tt|a)\b[^<>]*>", re.IGNORECASE)
_KEY_ASCII = frozenset("0123456789abcdefghijklmnopqrstuvwxyz")
_NOT_KEY_BYTES = bytes(byte for byte in range(256) if chr(byte) not in _KEY_ASCII)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
DERIVED_TITLE_WORDS = 12


@lru_cache(maxsize=1)
def _latex_converter():  # pylatexenc is imported lazily: most text has no LaTeX at all
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces=True)


@lru_cache(maxsize=1)
def _latex_context():
    """pylatexenc's default macro database, built once: a LatexWalker left to itself builds it anew for
    every piece it parses (7 categories, about 1 ms a formula)."""
    from pylatexenc.latexwalker import get_default_latex_context_db

    return get_default_latex_context_db()


def _latex_to_text(latex: str) -> str:
    return _latex_converter().latex_to_text(latex, latex_context=_latex_context())


def strip_latex(text: str) -> str:
    """Render stray LaTeX ("$n^{1.5}$", "{B}ayesian", "\\emph{x}", "a---b") as plain Unicode text.

    Only the pieces that need it (inline math, macros with their arguments) go through
    pylatexenc, one cached piece at a time; the plain text around them only loses its
    case-protecting braces and gets its dashes. A whole abstract through the renderer cost
    about 6 ms; most of it is plain text.
    """
    if not _LATEX_HINT.search(text):
        return _plain(text)
    text = _repair_latex(text)
    parts, last = [], 0
    for match in _LATEX_SPAN.finditer(text):
        parts.append(_plain(text[last:match.start()]))
        parts.append(_render(match.group()))
        last = match.end()
    parts.append(_plain(text[last:]))
    return "".join(parts)


def _plain(text: str) -> str:
    """Text outside math and macros: BibTeX braces dropped, TeX dashes as Unicode dashes."""
    if "{" in text or "}" in text:
        text = text.replace("{", "").replace("}", "")
    if "--" in text:
        text = text.replace("---", "\u2014").replace("--", "\u2013")
    return text


@lru_cache(maxsize=20_000)
def _render(piece: str) -> str:
    if piece[:1] == "$" and "\\" in piece:
        piece = _OPERATOR.sub(lambda m: f"{m.group(1)}{{}} " if m.group(1) else " ", piece)
    simple = _simple_math(piece)
    if simple is not None:
        return simple
    protected = re.sub(r"(?<!\\)([%&])", r"\\\1", piece)  # comment/alignment characters in LaTeX
    try:
        return _latex_to_text(protected)
    except Exception:  # noqa: BLE001 - pylatexenc raises many kinds; keep the raw text then
        return piece


def _simple_math(piece: str) -> str | None:
    """Inline math made of letters, digits, ^, _, braces and symbol macros, rendered without parsing.

    Gives what pylatexenc gives (checked on every formula of the v267 excerpt and the ICML 2025
    titles) at a fraction of the cost; None for anything else (a macro with an argument, …).
    """
    if len(piece) < 3 or piece[0] != "$" or piece[-1] != "$" or piece[1] == "$":
        return None
    body = piece[1:-1]
    if _ARGUMENT.search(body):  # pylatexenc strips the formula and reads '~' as a no-break space: left to it
        if "~" in body or "$" in body or body[0].isspace() or body[-1].isspace():
            return None
        body = _argument_macros_expanded(body)
        if body is None:
            return None
        shown = _simple_math(f"${body}$")
        return shown if shown is not None and shown == shown.strip() else None
    parts: list[str] = []
    after_macro = False
    for token in _MATH_TOKEN.findall(body):
        if token in ("\\{", "\\}"):
            parts.append(token[1])
        elif token[0] == "\\":
            symbol = _symbol(token) if token[1:].isalpha() else None
            if not symbol:
                return None
            parts.append(symbol)
            after_macro = True
            continue
        elif token not in "{}":
            parts.append(token.lstrip() if after_macro else token)  # LaTeX eats the space after a macro
        after_macro = False
    return "".join(parts)


def _argument_macros_expanded(body: str) -> str | None:
    """`\\frac{a}{b}` → `{a}/{b}`, `\\sqrt{x}` → `√({x})` (pylatexenc's own templates, each argument kept as a
    group, rendered with the rest); None for any other macro given an argument, or arguments not in braces."""
    for _ in range(64):
        found = _ARGUMENT.search(body)
        if not found:
            return body
        name = found.group()[1:-1]
        if name not in _ARGUMENT_TEMPLATES:
            return None
        template, count = _ARGUMENT_TEMPLATES[name]
        arguments, end = [], found.end() - 1
        for _ in range(count):
            close = _group_end(body, end)
            if close is None:
                return None
            arguments.append(body[end:close])
            end = close
        body = body[:found.start()] + template.format(*arguments) + body[end:]
    return None


_ARGUMENT_TEMPLATES = {"frac": ("{}/{}", 2), "sqrt": ("\u221a({})", 1), "underline": ("{}", 1),
                       "overline": ("{}", 1)}


def _group_end(text: str, start: int) -> int | None:
    """The offset just after the brace group opening at `start` (escaped braces skipped); None if there is none."""
    if not text.startswith("{", start):
        return None
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if not depth:
                return index + 1
        index += 1
    return None


@lru_cache(maxsize=2_000)
def _symbol(macro: str) -> str | None:
    """What pylatexenc makes of a lone symbol macro ("\\alpha" → "α"); None for one that wants arguments."""
    shown = _latex_to_text(f"${macro}$")
    return None if not shown or any(mark in shown for mark in ("\\", "%s", "$")) else shown


def _repair_latex(text: str) -> str:
    """Fix what scraped titles do to LaTeX before rendering it.

    Font macros become their plain argument, also when the braces were lost on the way
    ("$\\mathcalVista\\mathcalDPO$" → "VistaDPO"; pylatexenc would print script letters or
    nothing), a lone dollar before a digit is money ("Earn $1 Million"), not math,
    "\\widetilde{O}" is Õ (pylatexenc drops the tilde), and a symbol macro keeps the space after it.
    """
    text = _FONT_MACRO_BRACED.sub("{", text)
    text = _FONT_MACRO_GLUED.sub("", text)
    text = _TILDE.sub(lambda m: unicodedata.normalize("NFC", (m.group(1) or m.group(2)) + "\u0303"), text)
    text = _SYMBOL_THEN_SPACE.sub(r"\\\1{}", text)
    if len(re.findall(r"(?<!\\)\$", text)) % 2:
        text = re.sub(r"(?<!\\)\$(?=\d)", r"\\$", text)
    return text


def clean_text(text: str | None, *, latex: bool = True) -> str:
    """NFC-normalise, repair TeX accent leftovers ("Rodrı́guez"), drop HTML tags and LaTeX, squeeze spaces."""
    if not text:
        return ""
    if not text.isascii():  # most titles are plain ASCII: skip the Unicode passes for them
        text = _DOTLESS_I_ACCENT.sub("i", unicodedata.normalize("NFD", text))
        text = unicodedata.normalize("NFC", text)
    if "<" in text:
        text = _HTML_TAG.sub("", text)
    if latex:
        text = strip_latex(text)
    return " ".join(text.split())


def title_key(title: str) -> str:
    """A matching key for titles: lower-case ASCII letters and digits only; a title mostly in a non-Latin
    script (recommender/scripts.py) keeps that script's letters too, so two Chinese or Russian titles are
    not one empty key (an English title with a Greek letter keeps its key)."""
    folded = unicodedata.normalize("NFKD", clean_text(title))
    if folded.isascii() or unread_script(folded) is None:
        return ascii_key(folded)
    return "".join(char for char in folded.lower() if char in _KEY_ASCII or letter_script(char) is not None)


def ascii_key(text: str) -> str:
    """The ASCII letters and digits of `text`, lower-cased (anything else dropped): a title key's alphabet.
    One bytes.translate, not a regular expression: a 10,000-item library's keys in a third of the time."""
    return text.encode("ascii", "ignore").lower().translate(None, _NOT_KEY_BYTES).decode("ascii")


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
