"""What every source takes (SourceOptions) and gives back (LibraryRead)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recommender.items import LibraryItem, Skipped


@dataclass
class SourceOptions:
    """Settings a scheme may need (credentials come from the CLI, env, config or keyring)."""

    library_id: str | None = None
    library_type: str = "user"
    api_key: str | None = None
    endpoint: str | None = None
    group: str | None = None
    cache_dir: Path | None = None
    show_progress: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class LibraryRead:
    """What was read from one or more sources: usable items, what was skipped, and counters."""

    items: list[LibraryItem] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
