"""Items about a whole field (a textbook, a handbook: Zotero's book, encyclopedia and dictionary entries) as
weaker content evidence: their similarities count WHOLE_FIELD_WEIGHT times in the content topK and in the reasons
(the similarity shown is the one that counted), so a paper a textbook alone carries ranks below one the library's
papers carry and is explained by them. The interests' seats, their bar, the interest a paper serves, the linear
model, the tf-idf topK and the feedback keep every item whole (weighted seats moved the seat bar in round 7).

Zotero's item type, not the text, marks them: similarity measures of "about everything" confuse it with "on the
corpus's field" (docs/evaluation-history.md, "Books as weaker evidence", has the measurement and the weight)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

WHOLE_FIELD_TYPES = frozenset({"book", "encyclopediaArticle", "dictionaryEntry"})
WHOLE_FIELD_WEIGHT = 0.75  # neutral on CiteULike-a for saves that are papers; 0.5 costs them (docs/evaluation.md)


def evidence_weights(item_types: Sequence[str]) -> np.ndarray | None:
    """Each item's weight as content evidence (float32); None when every item counts the same (no whole-field
    item, or only such items, as in `similar` on one book: the weight ranks them against the others, and a
    uniform one would only lower every match)."""
    weights = np.array([WHOLE_FIELD_WEIGHT if kind in WHOLE_FIELD_TYPES else 1.0 for kind in item_types],
                       dtype=np.float32)
    return None if not len(weights) or bool((weights == weights[0]).all()) else weights


def combined(first: np.ndarray | None, second: np.ndarray | None) -> np.ndarray | None:
    """Two optional per-item weights as one (their product); None when neither is given."""
    if first is None or second is None:
        return first if second is None else second
    return (np.asarray(first, dtype=np.float32) * np.asarray(second, dtype=np.float32)).astype(np.float32)
