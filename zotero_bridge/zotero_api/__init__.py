"""The Zotero Web API v3, below every other Zotero room: the transport (`client.py`: one pyzotero
session, request counts, Backoff and retries), the library as the cache holds it (`snapshot.py`,
`cache.py`), credentials, collection paths, the write-back plan (`writeback.py`, no transport) and
its Web API writer (`writer.py`). Imports recommender's vocabulary and zotero_bridge.errors only.
"""
