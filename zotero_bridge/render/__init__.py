"""Renderers: recommendations and libraries → text for people (table, Markdown, HTML, JSON, CSV)
and files Zotero imports (BibTeX, RIS, CSL-JSON). The other end of the pipeline; imports only the
recommender's item types.
"""
