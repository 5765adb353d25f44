"""ReBeL training by self-play: episode loops (:mod:`.selfplay`), replay buffer
(:mod:`.replay`), trainer (:mod:`.trainer`), checkpoints (:mod:`.checkpoint`), run
directory (:mod:`.rundir`), evaluation (:mod:`.evaluation`), configuration (:mod:`.config`)
and the run itself (:mod:`.run`)."""
