"""Score a folder of Zotero exports (one user each) against ICML 2025 through the Python API.

    .venv/bin/python examples/batch_score.py LIBRARY_FOLDER [CORPUS.jsonl]

Ranks all 3,330 ICML 2025 papers by default (the bundled list with the seed abstracts on their papers,
enriched by `zotrec corpus fetch icml2025` once run), or CORPUS.jsonl. Writes lab-scores.csv (user,
rank, id, title, score, reasons; resumable) and prints the papers most users share in their top 20:
`zotrec score --libraries FOLDER --features tfidf --group-summary`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from recommender import Recommender, load_corpus
from recommender.batch.runner import score_libraries
from recommender.corpus.default import default_corpus
from zotero_bridge.cli.batch import load_user_library, user_libraries

folder = sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent  # holds library.bib: one user
default = default_corpus()
papers = (load_corpus([sys.argv[2]]) if len(sys.argv) > 2
          else load_corpus(default.files, enrich_with=default.fetched)).papers

recommender = Recommender(papers)  # corpus features: computed once
print(f"ranking {len(papers):,} papers", file=sys.stderr)
users = user_libraries([folder])  # {"alice": "lab/alice.bib", …}: the user id is the file stem
summary = score_libraries(
    recommender, users, load=load_user_library, output="lab-scores.csv", top_n=20, group_summary=True,
    progress=lambda done, total: print(f"{done}/{total} users", file=sys.stderr),
)

print(f"{summary.scored} users scored, {summary.resumed} already done, {len(summary.failures)} failed")
for user, reason in summary.failures:
    print(f"  skipped {user}: {reason}")
for paper in summary.group.rows()[:5]:
    print(f"{paper['users']:>3} users, mean rank {paper['mean_rank']:>5}: {paper['title']}")
