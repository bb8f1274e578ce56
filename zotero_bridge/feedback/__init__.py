"""Learning from what the user did in Zotero with zotrec's recommendations: the memory of what was
recommended (memory.py), the rules that read each one's fate (fates.py) from the Web API (web_view.py) or
zotero.sqlite (sqlite_view.py), and the step from fates to the recommender's feedback lists (learn.py)."""
