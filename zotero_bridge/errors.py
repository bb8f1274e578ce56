"""Errors from reading or writing Zotero, each with a hint a user can act on."""

from __future__ import annotations

from recommender.errors import RecommenderError


class BridgeError(RecommenderError):
    """Base class for Zotero-side failures; the message is one line, never holds the API key."""


class SourceError(BridgeError):
    """A `--library` source could not be named, found or read."""
