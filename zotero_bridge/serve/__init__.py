"""`zotrec serve`: the reading list as a local triage page (Save, Not for me, More like this, Later) that learns
from every click: the guard that keeps it the user's alone (`guard.py`), the page (`page.py`), the session that
ranks and records (`session.py`), and the standard library's HTTP server around them (`app.py`)."""
