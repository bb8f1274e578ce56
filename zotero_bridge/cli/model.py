"""`zotrec train` and `zotrec evaluate citeulike|library`: the collaborative model and quality measures."""

from __future__ import annotations

import click

from zotero_bridge.cli.common import (
    DEFAULT_AGGREGATION,
    friendly_errors,
    load_model,
    log,
    read_sources,
    run_inputs,
    scoring,
    source_options,
    source_settings,
    write_output,
)
from zotero_bridge.cli.corpus_input import load_corpus_papers


@click.command("train")
@click.option("--data", "data_spec", required=True, metavar="NAME:FOLDER",
              help="citeulike-a:FOLDER (users.dat, titles.txt) or citeulike-t:FOLDER (users.dat, mult.dat, "
                   "vocabulary.dat).")
@click.option("-o", "--output", required=True, metavar="FILE", help="Where to write the model (.npz).")
@click.option("--aggregation", default=None, help="The topK inside the fused score its weights are chosen for. "
                                                  "Default: top5.")
@click.option("--factors", type=click.IntRange(min=2), default=None, help="ALS factors (default 128).")
@click.option("--seed", type=int, default=0, show_default=True, help="ALS random_state.")
@click.option("--features", type=click.Choice(["dense"]), default="dense", show_default=True,
              help="The model zotrec ships: dense → ALS factor kNN map (the tf-idf model is retired; "
                   "`zotrec evaluate citeulike` still measures it as a peer).")
@click.option("--adapter-beta", type=click.FloatRange(min=0), default=None, metavar="BETA",
              help="dense: weight of the predicted factors in the linear model's space (0: the plain "
                   "embeddings). Default 0.5, as shipped.")
@friendly_errors
def train_command(data_spec, output, aggregation, factors, seed, features, adapter_beta):
    """Train the collaborative model: ALS on who saved what, a MiniLM → factor map, validated fusion weights.

    \b
    Example:
        zotrec train --data citeulike-a:../shared/data/citeulike-a -o model.npz
        zotrec reading-list --library examples/library.bib --model model.npz
    """
    import datetime
    import platform
    import time
    from importlib.metadata import version

    from recommender.collaborative.datasets import load_dataset
    from recommender.collaborative.model import ALSSettings
    from recommender.evaluation.folds import settings_for
    from recommender.evaluation.protocol import dense_report_rows, train_model
    from recommender.features import make_representation
    from recommender.features.dense import require_dense
    from recommender.formats.output import check_output_path
    from recommender.scoring.fusion import LEARNED_BASE

    target = check_output_path(output, run_inputs(data_spec.partition(":")[2]))  # before hours of training
    started = time.perf_counter()
    settings = ALSSettings(random_state=seed, **({"factors": factors} if factors else {}))
    require_dense()
    from recommender import progress

    progress.step(f"Reading {data_spec}", log=True)
    data = load_dataset(data_spec)
    representation = make_representation(features)
    progress.step(f"Embedding {data.n_items:,} items with MiniLM (cached for later runs)", log=True)
    vectors = dense_report_rows(data, representation)
    beta = {} if adapter_beta is None else {"adapter_beta": adapter_beta}
    model = train_model(data, vectors, settings_for(data, settings), representation.model_id,
                        aggregation or LEARNED_BASE, **beta)
    model.provenance.update({
        "command": f"zotrec train --data {data.name}:FOLDER --features dense"
                   + (f" --factors {factors}" if factors else "") + (f" --seed {seed}" if seed else "")
                   + (f" --adapter-beta {adapter_beta:g}" if adapter_beta is not None else ""),
        "trained_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": {name: version(name) for name in ("implicit", "numpy", "scikit-learn")}
                    | {"python": platform.python_version()},
    })
    model.save(target)  # the resolved path: a link is written through, never replaced
    log.info("Wrote %s (fusion weights %s, %.0f s).", output, model.provenance["fusion_weights"],
             time.perf_counter() - started)


@click.group("evaluate")
def evaluate_group() -> None:
    """Measure recommendation quality: on CiteULike against peers' rules, or on your own library.

    \b
    Example:
        zotrec evaluate citeulike --data citeulike-a:../shared/data/citeulike-a --folds 1
        zotrec evaluate library --library examples/library.bib --holdout-newest 5
    """


@evaluate_group.command("citeulike")
@click.option("--data", "data_spec", required=True, metavar="NAME:FOLDER",
              help="citeulike-a:FOLDER or citeulike-t:FOLDER.")
@click.option("--folds", type=click.IntRange(1, 5), default=5, show_default=True,
              help="How many of the 5 item-cold folds to run (1 is the quick check).")
@click.option("--svm-users", type=click.IntRange(min=0), default=300, show_default=True,
              help="Users per fold for the per-user SVM peer (slow); 0 skips it.")
@click.option("--factors", type=click.IntRange(min=2), default=None, help="ALS factors (default 128).")
@click.option("--features", type=click.Choice(["tfidf", "dense"]), default="tfidf", show_default=True,
              help="dense: every rule on sentence embeddings, and zotrec's fused score (the shipped default), "
                   "each also on the fine benchmark (nDCG@10 and Kendall tau among each user's 100 nearest "
                   "held-out items).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
@friendly_errors
def evaluate_citeulike_command(data_spec, folds, svm_users, factors, features, fmt, output):
    """Item-cold K-fold evaluation: recall@20/50/100/300 and nDCG@50 of every rule, random floor beside.

    \b
    Example:
        zotrec evaluate citeulike --data citeulike-t:../shared/data/citeulike-t --folds 1 --format json
    """
    import json

    from recommender.collaborative.datasets import load_dataset
    from recommender.collaborative.model import ALSSettings
    from recommender.evaluation.protocol import evaluate_citeulike, format_table

    settings = ALSSettings(**({"factors": factors} if factors else {}))
    dense = {}
    if features == "dense":
        from recommender.features import make_representation

        representation = make_representation("dense")
        dense = {"representation": representation, "encoder_id": representation.model_id}
    report = evaluate_citeulike(load_dataset(data_spec), folds=folds, settings=settings, svm_users=svm_users, **dense)
    text = json.dumps(report, indent=2) + "\n" if fmt == "json" else format_table(report)
    write_output(text, output, run_inputs(data_spec.partition(":")[2]))


@evaluate_group.command("feedback")
@click.option("--data", "data_spec", required=True, metavar="NAME:FOLDER",
              help="citeulike-a:FOLDER or citeulike-t:FOLDER.")
@click.option("--fold", type=click.IntRange(0, 4), default=0, show_default=True, help="The item-cold fold reported.")
@click.option("--users", type=click.IntRange(min=0), default=2000, show_default=True,
              help="Users sampled per fold (0: all; the per-user model makes all of them slow).")
@click.option("--features", type=click.Choice(["tfidf", "dense"]), default="tfidf", show_default=True,
              help="tfidf: tf-idf top5; dense: MiniLM with the fused score zotrec uses by default.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
@friendly_errors
def evaluate_feedback_command(data_spec, fold, users, features, fmt, output):
    """A simulated user over 3 rounds of top-20 lists keeps their hidden saves and removes the rest:
    precision@20 and recall@50 per round, with and without learning from it (rule chosen on fold 1).

    \b
    Example:
        zotrec evaluate feedback --data citeulike-a:../shared/data/citeulike-a --users 2000
        zotrec evaluate feedback --data citeulike-a:../shared/data/citeulike-a --users 2000 --features dense
    """
    import json

    from recommender.collaborative.datasets import load_dataset
    from recommender.evaluation.feedback_sim import evaluate_feedback, format_feedback_table

    dense = {}
    if features == "dense":
        from recommender.features import make_representation
        from recommender.features.dense import require_dense

        require_dense()
        representation = make_representation("dense")
        dense = {"representation": representation, "encoder_id": representation.model_id}
    report = evaluate_feedback(load_dataset(data_spec), fold=fold, users=users or None, **dense)
    text = json.dumps(report, indent=2) + "\n" if fmt == "json" else format_feedback_table(report)
    write_output(text, output, run_inputs(data_spec.partition(":")[2]))


@evaluate_group.command("library")
@source_options
@click.option("--holdout-newest", "holdout", type=click.IntRange(min=1), default=10, show_default=True,
              help="Hide this many most recently added items and rank them among the corpus.")
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH|NAME",
              help="Corpus file(s) or a named corpus. Default (also the name icml2025): the bundled ICML 2025 list, enriched by a fetch.")
@click.option("--aggregation", default=None, help="As in reading-list. Default: the reading list's default.")
@click.option("--model", "model_path", metavar="PATH|none",
              help="As in reading-list: default the shipped collaborative part; 'none': content only.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly_errors
def evaluate_library_command(libraries, library_id, library_type, api_key, endpoint, holdout, corpus_paths,
                             aggregation, model_path, fmt):
    """Hide your newest items, score them among the corpus from the rest, and show where they rank.

    \b
    Example:
        zotrec evaluate library --library ~/Zotero/zotero.sqlite --holdout-newest 10
    """
    import dataclasses
    import json

    from recommender.evaluation.holdout import evaluate_library_holdout, format_holdout
    from recommender.features.dense import choose_features

    features = choose_features(None)
    aggregation, model = scoring(aggregation or DEFAULT_AGGREGATION, load_model(model_path, features))
    read = read_sources(libraries, source_settings(library_id, library_type, api_key, endpoint))
    result = evaluate_library_holdout(read.items, load_corpus_papers(corpus_paths), holdout,
                                      aggregation=aggregation, model=model, representation=features)
    from recommender.formats.output import safe_json, safe_text  # the hidden items' titles are the library's text

    click.echo(safe_json(json.dumps(dataclasses.asdict(result), indent=2)) if fmt == "json"
               else safe_text(format_holdout(result)), nl=fmt == "json")
