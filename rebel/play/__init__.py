"""Playing against the bot: card games (:mod:`~rebel.play.cards`), board games
(:mod:`~rebel.play.boards`) and the running score (:mod:`~rebel.play.score`)."""
