"""Evaluation: the CiteULike item-cold protocol, the peer rules it compares against, and the
per-library hold-out. Sits on top of scoring and collaborative; nothing below imports it.
"""
