"""zotrec's recommender: corpus, features, scoring and evaluation. Knows nothing of Zotero."""

from .corpus import CorpusLoad, load_corpus
from .errors import EmptyLibraryError, InputError, RecommenderError
from .items import Creator, LibraryItem, Paper, Reason, Recommendation, Skipped
from .ranking import Recommender, recommend

__all__ = [
    "CorpusLoad",
    "Creator",
    "EmptyLibraryError",
    "InputError",
    "LibraryItem",
    "Paper",
    "Reason",
    "Recommendation",
    "Recommender",
    "RecommenderError",
    "Skipped",
    "load_corpus",
    "recommend",
]
