"""Everything Ray (optional extra): connecting to a cluster (:mod:`~rebel.distributed.cluster`),
the worker actor (:mod:`~rebel.distributed.worker`), self-play on actors
(:mod:`~rebel.distributed.pool`) and mode (b) split across actors
(:mod:`~rebel.distributed.evaluation`)."""
