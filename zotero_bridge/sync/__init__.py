"""`zotrec sync`'s orchestration (`run.py`): read the library through the Web API, learn from the fates
of earlier recommendations, score, plan and write back. The top Zotero room below the CLI: imports
zotero_api, sources, feedback and recommender.
"""
