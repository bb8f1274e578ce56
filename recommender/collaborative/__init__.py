"""Collaborative part: the ALS model learned from researcher libraries (CiteULike), its text→factor
map, and the dataset loaders. Feeds scoring through CollaborativeModel; imports features only.
"""
