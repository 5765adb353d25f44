"""Exchange with the outside: policy files (:mod:`~rebel.interop.policy_io`) and OpenSpiel
(:mod:`~rebel.interop.openspiel`, optional extra)."""
