"""TeX operator names read as words (issue 38): "$\\ln\\ln T$" is "ln ln T", not "lnln T", in the quick path and
in pylatexenc's alike (both see the same spaced formula); a bracket or script after one stays close."""

from __future__ import annotations

import pytest

from recommender.text import clean_text


@pytest.mark.parametrize(("raw", "shown"), [
    (r"Regret of $\ln\ln T$ order", "Regret of ln ln T order"),
    (r"$T\log T$ samples", "T log T samples"),
    (r"$\sin\theta$", "sin θ"),
    (r"$O(\sqrt{T\log T})$", "O(√(T log T))"),
    (r"$\mathcal{O}(n\log n)$", "O(n log n)"),
    (r"$\log\log n$", "log log n"),
    (r"$\ln(x)$ and $\exp(-x)$", "ln(x) and exp(-x)"),
    (r"$\max_i x_i$", "max_i x_i"),
    (r"$n\log^2 n$", "n log^2 n"),
    (r"$\frac{\log n}{n}$", "log n/n"),
    (r"$\alpha\beta$", "αβ"),  # not operator names: as before
    (r"\emph{Logarithms} $\lambda$", "Logarithms λ"),
])
def test_operator_names_are_set_apart(raw, shown):
    assert clean_text(raw) == shown
