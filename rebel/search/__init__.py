"""Solving and search: full-game solvers (:mod:`~rebel.search.solve`), the evaluation of
test-time search and its settings (:mod:`~rebel.search.evaluate`,
:mod:`~rebel.search.settings`) and the self-play loops that generate training data
(:mod:`~rebel.search.selfplay`)."""
