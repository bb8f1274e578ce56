"""Corpus: the papers to rank. Reading files (readers), the stored-corpus format (store),
fetching from PMLR/OpenReview (fetch, http, records) and giving untitled seed abstracts their
titles (enrich). Step 1 of the pipeline: source → Paper. Imports formats and the vocabulary only.
"""
