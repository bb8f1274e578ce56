"""Shared file-format parsing: decoding text files and BibTeX.

Used by the corpus readers here and by zotero_bridge's library readers. Imports only the
shared vocabulary (recommender.items, recommender.errors, recommender.text).
"""
