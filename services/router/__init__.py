"""The deterministic mode router: signals, weights, exemplars, decisions.

The five modes, as the labelled sets in tests/data and the router's signals read them (settled in issue 31's
third round, applied to questions about the past in its fourth; every routing set is labelled by these):

- **ACKNOWLEDGE**: the person tells something and asks for nothing — news, an update, a plan, a passing mood, a
  fact about themselves or their day, thanks, a greeting or a goodbye — so a short acknowledgement (perhaps one
  follow-up question) is the right reply. Signals: ``tells`` (no question, request, command or skill words, no
  pointer left unresolved), the phatic signals (``greeting``, ``thanks``, ``farewell``, ``reaction``). Distress or
  an explicit plea for help or support is not ACKNOWLEDGE but RESPOND (``distress``).
- **RESPOND**: questions about the world, questions about the person's own past that want an answer in words
  ("what did I tell you about my landlord?", "do you remember where I parked?": ``past_question``), requests to
  write, explain, advise or plan, asking an opinion, and distress.
- **ACT**: an explicit command that carries its content — lists and their items, scheduling and reminders,
  something to memorize, goals — and reading stored items back by command ("show my reminders", "list my goals",
  "bring up what I saved about the boiler": ``shows_stored``) or by a question about a skill's own store ("what's
  on my shopping list?", "what reminders do I have?").
- **CLARIFY**: a command with nothing to act on ("Set a reminder."), a reference to something never said ("send
  that to her" with no earlier turn), or a request too vague to act on ("can you help me with something?").
  A request's object is read from its parse (``services/router/objects.py``): one of pointers only ("the same",
  "that one we talked about") is ``commanded_pointer``, one of placeholders only ("something") ``names_nothing``.
- **IGNORE**: non-messages only — empty, punctuation only, keyboard mashing. A real message is never ignored.
"""
