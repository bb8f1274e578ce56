"""The Zotero Web API v3: the HTTP client (versions, write tokens, backoff), its SQLite cache,
credentials, the write-back plan and `sync`. The write end of the pipeline; imports sources and
recommender, never the CLI.
"""
