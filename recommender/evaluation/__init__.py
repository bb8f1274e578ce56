"""Evaluation: the CiteULike item-cold protocol and the feedback simulation on either kind of features, the
peer rules they compare against, and the per-library hold-out. Sits on top of scoring and collaborative;
nothing below imports it, and it never imports experiments/.
"""
