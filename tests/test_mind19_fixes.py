"""What the tuning people of earlier sessions lost on the nineteenth session's tree, each in its general form."""

from __future__ import annotations

import pytest

from services.errors import NamesRefused
from services.llm.guard import ScaffoldGuard, offer_without
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

DRINKS = frozenset({"beer", "wine", "lager"})
TRIVIA = "trivia night at the pub with the boys tonight. what should i get to drink"


def test_an_offer_cut_back_to_the_question_said_again_offers_nothing() -> None:
    """Off the grog, asked what to drink at the pub: "For trivia night at the pub. A cold beer …" was sent as
    "For trivia night at the pub." — the question said back, nothing offered — instead of being written again."""
    assert offer_without("For trivia night at the pub. I'd go for a cold beer.", DRINKS, TRIVIA) is None
    guard = ScaffoldGuard(lambda _: None, message=TRIVIA, refused=DRINKS)
    with pytest.raises(NamesRefused):
        guard.finish("For trivia night at the pub. I'd go for a cold beer.")


@pytest.mark.parametrize(("reply", "kept"), [
    # A sentence of its own that offers something stays.
    ("A lime and soda is a good shout. Or a cold beer.", "A lime and soda is a good shout."),
    # An alternative the person asked about by name is an answer, not the question said back.
    ("You could have tea or coffee.", "You could have tea."),
])
def test_an_offer_that_says_something_of_its_own_is_kept(reply: str, kept: str) -> None:
    refused = DRINKS | {"coffee"}
    assert offer_without(reply, refused, "tea or coffee tonight? what should i drink at the pub") == kept


# A thing wished for by its purpose asks for an idea, not for a deed on an unnamed object: siobhan's "need something
# to switch off to after shift, any film recs for tonight?" was asked "What exactly would you like me to do?".
@pytest.mark.parametrize(("text", "mode"), [
    ("need something to unwind with after my shift, any telly recs?", "RESPOND"),
    ("I'd like something to nibble on before the match, any ideas?", "RESPOND"),
    # ... while a placeholder with a deed's participle or a bare wish still needs asking
    ("I need something added to my list", "CLARIFY"),
    ("I need something to be put on the shopping list", "CLARIFY"),
    ("I need something", "CLARIFY"),
])
def test_a_thing_wished_for_by_its_purpose_asks_for_an_idea(routers, text: str, mode: str) -> None:  # noqa: F811
    assert {found for found, _ in routes(routers, text)} == {mode}
