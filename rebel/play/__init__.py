"""Playing against the bot: card games (:mod:`~rebel.play.cards`, with the running score and
its interval) and board games (:mod:`~rebel.play.boards`)."""
