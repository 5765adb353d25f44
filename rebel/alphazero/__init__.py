"""AlphaZero for m,n,k games (the perfect-information case of ReBeL), on the same C++ core:
the board, exact solver and MCTS are in :mod:`rebel._core` (``MnkBoard``, ``MnkSolver``,
``MctsBatch``, ``mnk_rollout_search``); this package holds the policy-value net
(:mod:`rebel.alphazero.net`), the players (:mod:`rebel.alphazero.players`) and matches
between them (:mod:`rebel.alphazero.match`)."""
