"""Configuration schemas of every command, in one place.

- :mod:`rebel.config.common`: the mechanism (typed omegaconf sections, YAML files, dotted
  overrides, unknown-key errors) and the sections every command shares (game, output).
- :mod:`rebel.config.solve`: ``rebel solve``.
- :mod:`rebel.config.eval`: ``rebel eval``.
- :mod:`rebel.config.train`: ``rebel train`` (ReBeL self-play training).
"""
