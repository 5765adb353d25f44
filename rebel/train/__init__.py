"""Training: ReBeL's value net by self-play (:mod:`.run`, with the replay buffer
:mod:`.replay`, the trainer :mod:`.trainer` and evaluation during training
:mod:`.evaluation`) and AlphaZero's policy-value net (:mod:`.alphazero_run`); both use the
checkpoints of :mod:`.checkpoint` and the run directory of :mod:`.rundir`. The self-play
loops themselves are :mod:`rebel.search.selfplay` (or :mod:`rebel.distributed.pool` on Ray)."""
