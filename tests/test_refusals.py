"""What the person refused is never offered: read from their facts, checked in the small model's reply."""

from __future__ import annotations

from functools import partial

import pytest
from sqlalchemy.orm import Session

from services.errors import NamesRefused
from services.llm.guard import ScaffoldGuard, names_refused
from services.llm.output import StopStream
from services.memory.context import assemble
from services.memory.facts import remember_fact
from services.memory.refusals import refused_things
from tests.llm_steps import Reply


@pytest.fixture
def session(db_engine):
    with Session(db_engine) as session:
        yield session
        session.rollback()


@pytest.mark.parametrize(("fact", "refused"), [
    ("The user really can't stand mushrooms, please never suggest anything with them", {"mushroom"}),
    ("You are allergic to peanuts, a bad allergy, so keep that in mind", {"peanut"}),
    ("The user doesn't eat pork, for religious reasons", {"pork", "ham", "bacon", "salami", "chorizo", "prosciutto",
                                                          "pepperoni"}),
    ("The user is not a fan of spicy food", {"spicy"}),
    ("The user quit smoking last year", {"smoking"}),
    ("Onions make the user really sick, the user never eat them", {"onion"}),
    ("Spicy food doesn't agree with the user", {"spicy"}),
    # Said formally, or as "hates" (which named nothing: "hate" matched first and the thing was lost).
    ("The user has never been able to abide olives", {"olive"}),
    ("Liquorice is quite out of the question, whatever anyone says", {"liquorice"}),
    ("The user hates celery", {"celery"}),
    # An activity refused is refused as its verb too: "never suggest jogging" and the reply's "a light jog".
    ("The user's knees are bad, please never suggest running or jogging", {"running", "run", "jogging", "jog",
                                                                           "sprint", "marathon", "10k", "parkrun",
                                                                           "treadmill"}),
    ("The user can't stand herring", {"herring"}),  # (no "her")
    # A taste told as what it is like: "coriander tastes like soap", "tripe tastes vile".
    ("Coriander tastes like soap to the user, so leave it out", {"coriander"}),
    ("Tripe tastes really revolting", {"tripe"}),
    ("The user tastes every sauce before serving", set()),
    # Refused with "refuses to", and a fear of heights or of flying (sixteenth session: told "really scared of heights,
    # no mountain or volcano trip for me", the 1.5B offered Mount Bromo for a weekend trip).
    ("The user refuses to fly", {"fly", "flight", "plane", "airport", "airline"}),
    ("The user is scared of the dentist", set()),  # a fear is no refusal unless it is of heights or of flying
])
def test_a_refusal_in_the_persons_words_names_what_they_refuse(fact: str, refused: set[str]) -> None:
    assert refused_things(fact) == refused


def test_a_fear_of_heights_refuses_the_high_places_a_trip_could_offer() -> None:
    refused = frozenset(refused_things("The user is really scared of heights, no mountain or volcano trip for the "
                                       "user pls, the user's friends always laugh"))
    assert {"mountain", "volcano", "mount", "climb", "cliff"} <= refused
    assert names_refused("1. Climbing Mount Bromo at sunrise", refused) is not None
    assert names_refused("Try the beaches of Gunung Kidul or the Prambanan temples.", refused) is None
    assert {"mountain", "cable car"} <= refused_things("The user has vertigo")
    assert {"flight", "plane"} <= refused_things("The user is terrified of flying")


def test_what_makes_the_person_sick_refuses_its_family_and_a_tired_day_refuses_nothing() -> None:
    assert {"fish", "salmon", "sushi", "prawn"} <= refused_things("Fish and seafood make the user really sick")
    assert refused_things("Work makes the user tired") == set()


def test_a_diet_refuses_what_it_does_not_name_and_a_plain_fact_refuses_nothing() -> None:
    vegetarian = refused_things("The user has been vegetarian their whole life")
    assert {"chicken", "bacon", "fish", "ham"} <= vegetarian and "cheese" not in vegetarian
    assert "cheese" in refused_things("The user went vegan last year")
    assert refused_things("The user likes mushrooms on pizza") == set()
    assert refused_things("The user works at a bank") == set()
    assert refused_things("No more nights for the user") == set()  # "no more" refuses only what one eats or drinks
    assert refused_things("No more fishing for the user") == set()


@pytest.mark.parametrize(("fact", "members"), [
    ("The user doesn't drink alcohol at all, hasn't for thirty years", {"wine", "beer", "cocktail"}),
    ("The user doesn't drink", {"wine", "beer"}),
    ("The user is lactose intolerant", {"cheese", "milk", "yogurt"}),
    ("The user has a nut allergy", {"peanut", "almond", "cashew"}),
    ("The user eats gluten-free", {"bread", "pasta", "pizza"}),
    ("No meat for me", {"chicken", "beef", "bacon"}),
    ("The user keeps kosher", {"pork", "shrimp"}),
    ("The user is avoiding sugar these days", {"sugar", "cake", "chocolate"}),
    ("The user can't have any caffeine, it gives the user heart palpitations", {"coffee", "espresso", "cola"}),
    ("The doctor told the user the user have diabetes type 2, so no more sugar", {"cake", "candy", "ice cream"}),
    ("No more coffee for the user", {"coffee", "latte"}),
    ("Amara won't eat anything green", {"broccoli", "pea", "spinach"}),
    ("Fyi the user is seriously allergic to shellfish, like carry-an-epipen allergic", {"shrimp", "seafood", "sushi"}),
    ("The user been off the grog 8 years btw", {"beer", "wine", "alcohol"}),
    # A body told to stop ("walking or jogging" was offered after a torn meniscus), typed without apostrophes, or
    # told in two words ("I don't fly. Ever.": the 1.5B offered a flight).
    ("Torn meniscus, he said no more running for the user, no jumping, nothing high impact", {"jog", "jump", "hiit"}),
    ("Doc said stay away fr so dont ever suggest the user shellfish stuff ok", {"shrimp", "crab", "lobster"}),
    ("The user don't fly", {"flight", "airport", "plane"}),
])
def test_a_word_for_a_family_of_things_refuses_its_members(fact: str, members: set[str]) -> None:
    assert members <= refused_things(fact)


def test_a_reply_names_a_refused_thing_by_its_whole_word_unless_it_leaves_it_out() -> None:
    refused = frozenset(refused_things("The user is vegetarian")) | {"mushroom"}
    assert names_refused("How about a creamy mushroom risotto?", refused) == "mushroom"
    assert names_refused("A ham and cheese toastie!", refused) == "ham"
    assert names_refused("Anchovies on toast", refused) == "anchov"
    # A kind of it the person can have is no offer of it.
    assert names_refused("Throw some veggie burgers and corn on the grill.", refused) is None
    assert names_refused("An oat milk latte and a banana.", frozenset(refused_things("The user is lactose intolerant"))
                         ) is None
    assert names_refused("Gluten-free toast with avocado.", frozenset(refused_things("The user is coeliac"))) is None
    assert names_refused("A burger and fries.", refused) == "burger"
    assert names_refused("A stir fry without mushrooms, with tofu.", refused) is None
    assert names_refused("Here is some code for your hamster's feeder", refused) is None  # not "cod", not "ham"
    assert names_refused("Anything you like!", frozenset()) is None
    # A place named by what it serves offers none of it; its dishes still may ("a seafood platter").
    shellfish = frozenset(refused_things("The user is allergic to shellfish"))
    assert names_refused("At the seafood restaurant, try the grilled snapper with chips.", shellfish) is None
    assert names_refused("A sushi bar does teriyaki chicken too.", shellfish) is None
    assert names_refused("Share the seafood platter!", shellfish) == "seafood"
    caffeine = frozenset(refused_things("The user can't have any caffeine"))
    assert names_refused("You can try herbal tea or a cup of coffee.", caffeine) == "coffee"
    assert names_refused("Rooibos with lemon, or warm water with honey.", caffeine) is None
    knee = frozenset(refused_things("Torn meniscus, he said no more running for the user, no jumping"))
    assert names_refused("You might consider walking or jogging regularly.", knee) == "jogging"
    assert names_refused("Swimming or cycling are kind to a knee.", knee) is None


def test_the_guard_stops_a_streamed_reply_at_the_refused_word_and_checks_the_whole_reply() -> None:
    sent: list[str] = []
    guard = ScaffoldGuard(sent.append, message="Give me an idea for dinner", refused=frozenset({"ham"}))
    guard("How about a ")
    with pytest.raises(NamesRefused):
        guard("ham sandwich?")
    assert "ham sandwich" not in "".join(sent)
    with pytest.raises(NamesRefused):
        ScaffoldGuard(sent.append, refused=frozenset({"peanut"})).finish("Try peanut butter on toast.")


def test_an_offer_keeps_its_alternatives_before_the_refused_one() -> None:
    """"Herbal tea or a cup of coffee" to a person who can't have caffeine is sent as "herbal tea": the 1.5B wrote
    the coffee again when asked to write the reply over (bench.answers)."""
    sent: list[str] = []
    guard = ScaffoldGuard(sent.append, message="Give me an idea for dinner", refused=frozenset({"ham"}))
    guard("How about a hamster-shaped pizza or a ")  # "ham" inside a longer word is no ham
    with pytest.raises(StopStream):
        guard("ham sandwich?")
    assert guard.finish("How about a hamster-shaped pizza or a ham sandwich?") == "How about a hamster-shaped pizza."
    assert guard.rewritten and "sandwich" not in "".join(sent)  # what went out is voided by the caller
    caffeine = frozenset(refused_things("The user can't have any caffeine"))
    assert ScaffoldGuard(sent.append, refused=caffeine).finish("Sure! A rooibos, or an espresso.") == "Sure! A rooibos."
    for nothing_left in ("Coffee is out, so how about rooibos", "A double espresso.", "Sure! Or a latte.",
                         "For a long night in the lab, a strong espresso."):  # a comma alone parts no alternatives
        with pytest.raises(NamesRefused):
            ScaffoldGuard(sent.append, refused=caffeine).finish(nothing_left)


def test_a_reply_offering_a_refused_thing_is_written_again_told_what_to_leave_out(fake_llm) -> None:
    """Through the real client: the scripted model suggests mushrooms, the retry shows it the offer turned down, and
    the person gets the second reply, not the apology."""
    from services.llm.client import LLMClient
    from services.llm.fallback import REFUSED_NOTE, generate_with_fallback
    from services.llm.roles import RoleConfig

    fake_llm.script_stream(Reply("How about a creamy mushroom risotto?"), Reply("How about a lemon pasta with peas?"))
    client = LLMClient(base_url=fake_llm.url, api_key=None, roles={"respond": RoleConfig(stream=True)})
    message = "Give me an idea for a quick dinner tonight."
    retries: list[bool] = []
    completion, fallback = generate_with_fallback(
        client, "respond", [{"role": "system", "content": "Be brief."}, {"role": "user", "content": message}],
        lambda _text: None, lambda: retries.append(True),
        guard=partial(ScaffoldGuard, message=message, refused=frozenset({"mushroom"})))
    assert not fallback and completion.text == "How about a lemon pasta with peas?" and retries
    retried = fake_llm.requests[-1]["messages"]  # its offer, and the person turning it down without naming it
    assert retried[-3:] == [{"role": "user", "content": message},
                            {"role": "assistant", "content": "How about a creamy mushroom"},
                            {"role": "user", "content": REFUSED_NOTE}]
    assert "mushroom" not in REFUSED_NOTE  # named in a note, the small model offered it again


def test_an_offer_cut_before_the_refused_thing_is_the_reply_without_writing_it_again(fake_llm) -> None:
    from services.llm.client import LLMClient
    from services.llm.fallback import generate_with_fallback
    from services.llm.roles import RoleConfig

    fake_llm.script_stream(Reply("You can try herbal tea or a cup of coffee, and some water."))
    client = LLMClient(base_url=fake_llm.url, api_key=None, roles={"respond": RoleConfig(stream=True)})
    sent: list[str] = []
    message = "What can I drink to keep me going?"
    completion, fallback = generate_with_fallback(
        client, "respond", [{"role": "user", "content": message}], sent.append,
        guard=partial(ScaffoldGuard, message=message, refused=frozenset(refused_things("The user avoids caffeine"))))
    assert not fallback and completion.text == "You can try herbal tea." and sent[-1] == completion.text
    assert len(fake_llm.requests) == 1 and "coffee" not in "".join(sent)


def test_a_second_offer_of_the_refused_thing_ends_in_saying_so_not_the_apology(fake_llm) -> None:
    from services.llm.client import LLMClient
    from services.llm.fallback import REFUSED_REPLY, generate_with_fallback
    from services.llm.roles import RoleConfig

    fake_llm.script_stream(Reply("Peanut noodles!"), Reply("A peanut butter sandwich."))
    client = LLMClient(base_url=fake_llm.url, api_key=None, roles={"respond": RoleConfig(stream=True)})
    sent: list[str] = []
    completion, fallback = generate_with_fallback(
        client, "respond", [{"role": "user", "content": "Suggest a snack."}], sent.append,
        guard=partial(ScaffoldGuard, message="Suggest a snack.", refused=frozenset({"peanut"})))
    assert not fallback and completion.text == REFUSED_REPLY and "peanut" not in completion.text.lower()
    assert sent[-1] == completion.text and len(fake_llm.requests) == 2


def test_the_small_model_notes_always_hold_the_persons_refusals(session, hash_embedder) -> None:
    """However many newer facts the person has, the refusal is in the notes of a dinner question and its thing is
    in the context's ``refused``; another person's refusal is not."""
    remember_fact(session, hash_embedder, "mia", "The user can't stand mushrooms, never suggest them")
    remember_fact(session, hash_embedder, "leo", "The user is allergic to peanuts")
    remember_fact(session, hash_embedder, "mia", "The user is lactose intolerant")
    for number in range(20):
        remember_fact(session, hash_embedder, "mia", f"The user visited museum number {number} in spring")
    context = assemble(session, hash_embedder, "mia", "Give me an idea for a quick dinner tonight.", compact=True)
    assert "can't stand mushrooms" in context.text and "peanut" not in context.text
    assert "mushroom" in context.refused and "cheese" in context.refused and "peanut" not in context.refused
    full = assemble(session, hash_embedder, "mia", "Give me an idea for a quick dinner tonight.")
    assert "mushroom" in full.refused and "peanut" not in full.refused  # a larger model's replies are held to it too
    assert "can't stand mushrooms" in full.text  # and it is told


def test_a_question_asking_for_an_idea_has_the_persons_tastes_just_before_it(session, hash_embedder) -> None:
    """The 1.5B read "Fish and seafood make you sick" at the top of its prompt and still offered salmon: a message
    asking for an idea gets what the person likes and avoids again in its own note; another message does not."""
    sick = "Fish and seafood make the user really sick, the user never eat them"
    remember_fact(session, hash_embedder, "greta", sick)
    remember_fact(session, hash_embedder, "greta", "The user prefer tea")
    remember_fact(session, hash_embedder, "greta", "The user is a physiotherapist in Zurich")
    from dataclasses import replace

    from services.memory.config import MemoryConfig

    config = MemoryConfig()  # the compact profile's: every fact of the person in the block, whatever its salience
    config = replace(config, context=replace(config.context, profile_facts=12, profile_min_salience=0.0))
    asked = assemble(session, hash_embedder, "greta", "We're at a restaurant on the coast, what should I order?",
                     compact=True, config=config)
    assert "never eat them" in asked.note and "prefer tea" in asked.note and "physiotherapist" not in asked.note
    assert "never eat them" in asked.about  # the block about the person holds it as before
    told = assemble(session, hash_embedder, "greta", "Where do I work?", compact=True, config=config)
    assert "never eat them" not in told.note and "prefer tea" not in told.note
