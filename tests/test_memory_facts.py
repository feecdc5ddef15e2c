"""Semantic facts: insert, merge, supersede (history kept), speaker attribution, forget."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from services.memory.facts import fact_key, forget_fact, list_facts, parse_triple, remember_fact
from services.memory.models import Fact
from tests.memory_builders import create_crowding_facts, create_user, unit_vector


def test_parse_triple_keys_first_person_shapes():
    assert parse_triple("I live in Berlin.").predicate == "live in"
    assert fact_key("I", "lives in") == fact_key("user", "live_in") == "user|live in"
    assert parse_triple("My sister's name is Priya").object == "priya"
    assert parse_triple("We went hiking").subject is None


@pytest.fixture
def session(db_engine):
    with Session(db_engine) as session:
        create_user(session, user_id="alice")
        yield session
        session.rollback()


@pytest.mark.integration
def test_contradiction_supersedes_and_keeps_history(session, hash_embedder):
    first = remember_fact(session, hash_embedder, "alice", "I live in Berlin")
    second = remember_fact(session, hash_embedder, "alice", "I now live in Lisbon")
    assert first.action == "inserted"
    assert second.action == "superseded" and second.superseded_id == first.fact_id
    active = list_facts(session, "alice")
    assert [f.text for f in active] == ["I now live in Lisbon"]
    history = list_facts(session, "alice", include_superseded=True)
    old = next(f for f in history if f.id == first.fact_id)
    assert old.superseded_by == second.fact_id and old.superseded_at is not None


@pytest.mark.integration
def test_duplicates_merge_and_multi_valued_predicates_accumulate(session, hash_embedder):
    a = remember_fact(session, hash_embedder, "alice", "I like jazz", confidence=0.6, source_exchange_id=None)
    b = remember_fact(session, hash_embedder, "alice", "i like jazz", confidence=0.5)
    c = remember_fact(session, hash_embedder, "alice", "I like climbing")
    assert b.action == "merged" and b.fact_id == a.fact_id
    assert c.action == "inserted"
    merged = session.get(Fact, a.fact_id)
    assert merged.mentions == 2 and merged.confidence == pytest.approx(0.8)
    assert len(list_facts(session, "alice")) == 2


@pytest.mark.integration
def test_same_key_same_object_merges_with_the_chunkers_triple(session, hash_embedder):
    a = remember_fact(session, hash_embedder, "alice", "The user's favourite colour is green", subject="user",
                      predicate="favourite colour", object="green")
    b = remember_fact(session, hash_embedder, "alice", "Alice loves the colour green most", subject="the user",
                      predicate="favourite_colour", object="Green")
    c = remember_fact(session, hash_embedder, "alice", "The user's favourite colour is now blue", subject="user",
                      predicate="favourite colour", object="blue")
    assert b.action == "merged" and b.fact_id == a.fact_id
    assert c.action == "superseded" and c.superseded_id == a.fact_id


@pytest.mark.integration
def test_assistant_statements_never_become_user_facts(session):
    session.add(Fact(user_id="alice", text="sneaked in", speaker="assistant"))
    with pytest.raises(IntegrityError):  # the database refuses it
        session.flush()


@pytest.mark.integration
def test_out_of_range_scores_are_refused(session, hash_embedder):
    with pytest.raises(ValueError, match="salience"):
        remember_fact(session, hash_embedder, "alice", "I have two cats", salience=7)
    with pytest.raises(ValueError, match="confidence"):
        remember_fact(session, hash_embedder, "alice", "I have two cats", confidence=1.5)


@pytest.mark.integration
def test_forget_fact_removes_it_and_its_history_only_for_its_owner(session, hash_embedder):
    create_user(session, user_id="bob")
    old = remember_fact(session, hash_embedder, "alice", "I work at Acme")
    new = remember_fact(session, hash_embedder, "alice", "I work at Globex")
    keep = remember_fact(session, hash_embedder, "alice", "I have a dog named Biscuit")
    assert forget_fact(session, "bob", new.fact_id) is False  # someone else's id looks missing
    assert forget_fact(session, "alice", new.fact_id) is True
    left = {f.id for f in list_facts(session, "alice", include_superseded=True)}
    assert left == {keep.fact_id} and old.fact_id not in left


@pytest.mark.integration
def test_remember_fact_only_flushes(session, hash_embedder, db_engine):
    remember_fact(session, hash_embedder, "alice", "I live in Oslo")
    with db_engine.connect() as other:  # another connection sees nothing until the caller commits
        assert other.execute(text("SELECT count(*) FROM facts")).scalar_one() == 0


@pytest.mark.integration
def test_a_near_duplicate_merges_when_other_users_crowd_the_index(session, hash_embedder):
    rng = np.random.default_rng(3)
    query = unit_vector(rng.standard_normal(384))
    mine = remember_fact(session, hash_embedder, "alice", "Sailing fills my weekends",
                         embedding=unit_vector(query + 0.3 * unit_vector(rng.standard_normal(384))))
    create_crowding_facts(session, near=query)
    again = remember_fact(session, hash_embedder, "alice", "Sailing fills my weekends!", embedding=query)
    assert again.action == "merged" and again.fact_id == mine.fact_id


@pytest.mark.integration
def test_a_new_job_supersedes_the_old_one(session, hash_embedder) -> None:
    bank = remember_fact(session, hash_embedder, "alice", "The user works at a bank")
    school = remember_fact(session, hash_embedder, "alice", "The user teaches maths at a secondary school now")
    assert school.action == "superseded" and school.superseded_id == bank.fact_id
    assert [f.text for f in list_facts(session, "alice")] == ["The user teaches maths at a secondary school now"]


@pytest.mark.integration
def test_a_fact_saying_something_ended_supersedes_the_facts_about_it(session, hash_embedder) -> None:
    piano = remember_fact(session, hash_embedder, "alice", "The user plays the piano")
    remember_fact(session, hash_embedder, "alice", "The user plays the guitar")
    coffee = remember_fact(session, hash_embedder, "alice", "The user loves coffee")
    stopped = remember_fact(session, hash_embedder, "alice", "The user stopped playing the piano")
    assert stopped.action == "superseded" and stopped.superseded_id == piano.fact_id
    no_coffee = remember_fact(session, hash_embedder, "alice", "The user doesn't drink coffee anymore")
    assert no_coffee.superseded_id == coffee.fact_id
    assert sorted(f.text for f in list_facts(session, "alice")) == [
        "The user doesn't drink coffee anymore", "The user plays the guitar", "The user stopped playing the piano"]


@pytest.mark.integration
def test_a_pet_rehomed_or_a_move_of_home_ends_what_was_true_before(session, hash_embedder) -> None:
    parrot = remember_fact(session, hash_embedder, "hana", "The user has a parrot called Kiwi at home")
    flat = remember_fact(session, hash_embedder, "hana", "The user lives in a flat in Peckham with two flatmates")
    job = remember_fact(session, hash_embedder, "hana", "The user works as an accountant in London")
    rehomed = remember_fact(session, hash_embedder, "hana", "The user had to rehome Kiwi, the neighbours complained")
    assert rehomed.action == "superseded" and rehomed.superseded_id == parrot.fact_id
    moved = remember_fact(session, hash_embedder, "hana", "The user moved")
    assert moved.action == "superseded" and moved.superseded_id == flat.fact_id
    active = {f.text for f in list_facts(session, "hana")}
    assert "The user works as an accountant in London" in active and job.fact_id
    assert not any("Peckham" in text or "parrot" in text for text in active)
    # The person's own sentences, opening with other words than "The user" (services/memory/from_words).
    loud = remember_fact(session, hash_embedder, "hana2", "At home we have a parrot called Kiwi, he's very loud")
    sad = remember_fact(session, hash_embedder, "hana2", "Sad news, we had to rehome Kiwi, the neighbours complained")
    assert sad.action == "superseded" and sad.superseded_id == loud.fact_id


@pytest.mark.integration
def test_a_change_told_in_two_words_or_a_moved_date_supersedes_what_it_changed(session, hash_embedder) -> None:
    nights = remember_fact(session, hash_embedder, "dan", "Right now the user drive nights, 10pm till 6 in the morning")
    remember_fact(session, hash_embedder, "dan", "The user's mom watches the kids")
    assert remember_fact(session, hash_embedder, "dan", "No more nights for the user").superseded_id == nights.fact_id
    march = remember_fact(session, hash_embedder, "tha", "Big date: the user's defence is set for the 6th of March")
    remember_fact(session, hash_embedder, "tha", "The user's thesis is about iron catalysts")
    remember_fact(session, hash_embedder, "tha", "The user hates meetings")
    moved = remember_fact(session, hash_embedder, "tha", "The examiner can't travel in March, so the user's "
                          "defence got moved to the 19th of May")
    assert moved.action == "superseded" and moved.superseded_id == march.fact_id
    remember_fact(session, hash_embedder, "tha", "The user's meeting with the lab got pushed back to Friday")
    active = {f.text for f in list_facts(session, "tha")}  # a thing without a date is not a moved date
    assert "The user's thesis is about iron catalysts" in active and "The user hates meetings" in active
    assert not any("6th of March" in text for text in active)
    assert "The user's mom watches the kids" in {f.text for f in list_facts(session, "dan")}


@pytest.mark.integration
def test_what_ended_is_the_thing_named_not_every_fact_of_the_person(session, hash_embedder) -> None:
    """"I sold my Fender and bought a Gibson" ends the Fender, not the person's name, home, lessons and tastes (each
    fact speaks of "the user", and "the user's Fender" once made "user" a thing that ended)."""
    told = ["The user is Rafael", "The user live in São Paulo and music is the user's whole life",
            "The user play an old Fender Stratocaster, had it since the user was fifteen",
            "On weekends the user teach guitar lessons to kids at the community centre",
            "The user can't stand country music, seriously, anything but that"]
    facts = {text: remember_fact(session, hash_embedder, "rafa", text) for text in told}
    sold = remember_fact(session, hash_embedder, "rafa",
                         "The user sold the user's Fender and bought a Gibson Les Paul, the sound is unreal")
    assert sold.superseded_id == facts[told[2]].fact_id
    active = {f.text for f in list_facts(session, "rafa")}
    assert active == {*told[:2], *told[3:], "The user sold the user's Fender and bought a Gibson Les Paul, the sound "
                      "is unreal"}


@pytest.mark.integration
def test_dropping_a_course_or_switching_from_it_ends_it(session, hash_embedder) -> None:
    studies = remember_fact(session, hash_embedder, "aya", "The user is studying architecture but is not sure about it")
    remember_fact(session, hash_embedder, "aya", "The user has a part-time job at a ramen shop")
    dropped = remember_fact(session, hash_embedder, "aya", "The user dropped architecture")
    assert dropped.action == "superseded" and dropped.superseded_id == studies.fact_id
    law = remember_fact(session, hash_embedder, "ben", "The user studies law in Lyon")
    switched = remember_fact(session, hash_embedder, "ben", "The user switched from law to medicine")
    assert switched.superseded_id == law.fact_id
    assert "The user has a part-time job at a ramen shop" in [f.text for f in list_facts(session, "aya")]


@pytest.mark.integration
def test_moving_supersedes_where_the_person_lived(session, hash_embedder) -> None:
    porto = remember_fact(session, hash_embedder, "alice", "The user lives in Porto")
    berlin = remember_fact(session, hash_embedder, "alice", "The user moved to Berlin")
    assert berlin.superseded_id == porto.fact_id


@pytest.mark.integration
def test_a_newer_age_replaces_the_older_one_for_that_person_only(session, hash_embedder) -> None:
    """"Lily is five" then "Lily turned six yesterday": Lily's age is six; Kuba's and the person's stay, and "she is
    80" names no one (a pronoun is not a key)."""
    from services.memory.from_words import chunk_from_words

    told = ["My granddaughter Lily is five, she's the light of my life.", "Kuba is seven and loves football.",
            "I'm 71 and retired.", "Lily turned six yesterday! We had a little party in the garden."]
    for message in told:
        for fact in chunk_from_words(message)["facts"]:
            remember_fact(session, hash_embedder, "sam", fact["text"])
    remember_fact(session, hash_embedder, "sam", "She is 80 this year")
    active = " | ".join(f.text for f in list_facts(session, "sam"))
    assert "Lily turned six" in active and "Lily is five" not in active
    assert "Kuba is seven" in active and "71" in active and "She is 80" in active
    assert parse_triple("The user is 5 minutes late").predicate != "age"


def test_a_move_told_with_we_replaces_where_the_person_lives(session, hash_embedder) -> None:
    """"We" includes the person: "we live in Lyon now" replaces "we live in Porto", and moving out of a place ends
    it; "we have two kids" is not a home and stays."""
    from services.memory.from_words import chunk_from_words

    told = ["we live in Porto, me, my husband and our two kids", "We have two kids, Rui and Ana",
            "So we finally did it, we moved out of Porto. We live in Lyon now!"]
    for message in told:
        for fact in chunk_from_words(message)["facts"]:
            remember_fact(session, hash_embedder, "ines", fact["text"])
    active = " | ".join(f.text for f in list_facts(session, "ines"))
    assert "Lyon" in active and "two kids" in active
    assert "live in Porto" not in active


def test_a_break_up_a_new_home_and_coffee_given_up_end_what_was_true(session, hash_embedder) -> None:
    """Changes told in chat's own ways: "yui and i broke up" (the person's "i", and who they split from named
    before it), "First night in the new house in Wrocław" (no "moved"), "I quit coffee" (the old fact said
    "espressos"). Each ended fact goes; what they did not change stays, and a coffee given up is not cola."""
    from services.memory.from_words import chunk_from_words

    told = {"kenji": ["my gf Yui is a nurse so we barely see each other", "I play bass in a band called Paper Lanterns",
                      "ngl rough couple weeks. yui and i broke up, it was mutual but still sucks"],
            "wojtek": ["we live in Poznań, 4th floor and no lift", "I drive trucks, mostly Poland to Germany",
                       "Finally!! First night in the new house in Wrocław. Boxes everywhere"],
            "amara": ["honestly can't function without my 3 espressos before a shift", "I drink a cola at lunch",
                      "Update: I quit coffee! Rooibos every morning now and I'm sleeping so much better"]}
    active = {name: " | ".join(_remembered(session, hash_embedder, name, [chunk_from_words(m) for m in messages]))
              for name, messages in told.items()}
    assert "Yui is a nurse" not in active["kenji"] and "Paper Lanterns" in active["kenji"]
    assert "Poznań" not in active["wojtek"] and "Wrocław" in active["wojtek"] and "trucks" in active["wojtek"]
    assert "espressos" not in active["amara"] and "Rooibos every morning now" in active["amara"]
    assert "cola at lunch" in active["amara"]


def test_a_plan_that_fell_through_a_trainee_who_quit_and_a_son_who_moved_end_only_what_they_changed(
        session, hash_embedder) -> None:
    """Changes told without the person as subject: a trip that "fell through" (and "were doing riga instead", chat's
    "we're"), a named trainee who "quit" (lower case, as typed), a son "settled in" another city, a move told as
    "finally in Hyderabad!!". Each ends the fact it changed and nothing else: the person's own move does not end
    their sister's home, nor the son's move theirs."""
    from services.memory.from_words import chunk_from_words

    told = {"orla": ["me and my mates are off to krakow in june!! so excited", "my cat Pixel is a ragdoll",
                     "change of plan, krakow fell through, hotel was a mess. were doing riga instead"],
            "bazza": ["3 hoists. me and a trainee, Kez", "kez quit. new trainee starts tuesday, lad called Amir"],
            "greet": ["I live in Leuven, near the station.", "My son Jonas lives in Ghent with his wife.",
                      "The move went fine, and Jonas and the kids are settled in Antwerp now."],
            "pilar": ["my sister lives in Madrid, she's a dentist", "I live in Toledo",
                      "we moved to Seville last week!"],
            "ravi": ["I live in Chennai with my parents", "Finally in bed, long day", "finally in Hyderabad!! so hot"],
            "noor": ["I live in Leeds", "finally in bed lol"]}
    active = {name: " | ".join(_remembered(session, hash_embedder, name, [chunk_from_words(m) for m in messages]))
              for name, messages in told.items()}
    assert "off to krakow" not in active["orla"] and "riga instead" in active["orla"] and "ragdoll" in active["orla"]
    assert "trainee, Kez" not in active["bazza"] and "Amir" in active["bazza"]
    assert "Ghent" not in active["greet"] and "Antwerp" in active["greet"] and "Leuven" in active["greet"]
    assert "sister lives in Madrid" in active["pilar"] and "Toledo" not in active["pilar"]
    assert "Chennai" not in active["ravi"] and "Hyderabad" in active["ravi"]  # arrived: a place's name
    assert "Leeds" in active["noor"]  # "in bed" is no move


def test_the_last_shift_or_voyage_told_with_its_day_ends_the_job_and_a_title_keeps_its_name(session,
                                                                                           hash_embedder) -> None:
    """"last shift at the depot was yesterday" ends the job at the depot; "my last trip to Rome was lovely" (a
    visit) and a last day told without its day end nothing. A title before a name is no sentence's end: "my
    dentist, Dr. Okafor, …" stays one fact holding the name (it was cut into "my dentist, Dr." and "Okafor …")."""
    from services.memory.from_words import chunk_from_words

    told = {"wes": ["I drive the 42 bus out of the Hessle depot, twelve years now",
                    "my last shift at the depot was yesterday! retired, finally"],
            "ines": ["I cook aboard the Lady of Avalon, a little cruise boat on the Shannon",
                     "Last voyage aboard the Lady of Avalon is on Tuesday, then I start at a hotel in Limerick."],
            "cam": ["I teach at the village school in Ardfern", "my last trip to Rome was lovely",
                    "The last day at the school was great, the kids made cards"],
            "ola": ["My dentist, Dr. Okafor, says I grind my teeth at night. Mrs. Hale at the desk booked me in."]}
    active = {name: " | ".join(_remembered(session, hash_embedder, name, [chunk_from_words(m) for m in messages]))
              for name, messages in told.items()}
    assert "Hessle depot" not in active["wes"] and "retired" in active["wes"]
    assert "cook aboard" not in active["ines"] and "hotel in Limerick" in active["ines"]
    assert "village school in Ardfern" in active["cam"]
    assert "Dr. Okafor, says the user grind" in active["ola"] and "Mrs. Hale at the desk" in active["ola"]


def test_a_pastime_given_up_and_a_car_that_died_for_good_end_what_they_were(session, hash_embedder) -> None:
    """"I have given up bridge altogether" ends the bridge on Tuesdays (only "gave up" was read), and "the Camry
    finally died on the Beltway" ends the Camry the person drove: both were answered with the old fact. A phone that
    "died" (a flat battery) and a knee that gave out end nothing."""
    from services.memory.from_words import chunk_from_words

    told = {"otti": ["On Tuesday afternoons I play bridge at the Rotunda with three ladies from church.",
                     "I have given up bridge altogether; I have joined the croquet club instead."],
            "kechi": ["I drive a 2011 Camry with 210,000 miles on it",
                      "Well the Camry finally died on the Beltway on Monday, we got a used Honda Pilot"],
            "tom": ["I drive a 2015 Golf and my phone is an old Pixel", "my phone died again, so annoying"]}
    active = {name: " | ".join(_remembered(session, hash_embedder, name, [chunk_from_words(m) for m in messages]))
              for name, messages in told.items()}
    assert "play bridge at the Rotunda" not in active["otti"] and "croquet club" in active["otti"]
    assert "2011 Camry" not in active["kechi"] and "Honda Pilot" in active["kechi"]
    assert "2015 Golf" in active["tom"] and "old Pixel" in active["tom"]


def test_facts_read_from_the_persons_words_supersede_like_any_fact(session, hash_embedder) -> None:
    """The small-model profile's chunk (chunk_from_words): the person's sentences, said of "the user"; a change of
    job told in their words replaces the old one, and a list request or a question states nothing."""
    from services.memory.from_words import chunk_from_words

    told = ["Hi! I'm Maya, I just moved to Leeds for a new job.", "I work at a bank, in the mortgage department.",
            "Add oat milk, bananas and rice to my shopping list", "What's my cat called?",
            "Big news: I left the bank last month. I'm teaching maths at a secondary school now."]
    active = _remembered(session, hash_embedder, "maya", [chunk_from_words(message) for message in told])
    assert "The user is teaching maths at a secondary school now" in active
    assert "The user left the bank last month" in active and "The user just moved to Leeds for a new job" in active
    assert not [fact for fact in active if "mortgage" in fact or "oat milk" in fact.lower() or "cat" in fact]
    # "works at a bank" is superseded; nothing from the request or the question


def test_two_named_peoples_facts_stay_theirs_and_one_change_of_job_leaves_the_other_alone(session,
                                                                                          hash_embedder) -> None:
    """An imported conversation between two people (LoCoMo): each one's "I" is that person by name, never "the
    user"; Melanie leaving the bank does not end Caroline's job there, and the assistant's words are no fact."""
    from services.memory.from_words import chunk_from_lines

    exchanges = [[("Caroline", "I work at a bank downtown."), ("Melanie", "Nice! I work at a bank too, in sales.")],
                 [("Melanie", "Big news: I left the bank last month. I'm teaching art now!"),
                  ("Caroline", "Wow, congrats! What do your kids think?")],
                 [("user", "I live in Lyon."), ("assistant", "I live in the cloud and I love Lisbon.")]]
    active = _remembered(session, hash_embedder, "friends", [chunk_from_lines(lines) for lines in exchanges])
    assert "Caroline work at a bank downtown" in active
    assert "Melanie is teaching art now" in active and "Melanie left the bank last month" in active
    assert not [fact for fact in active if "the user work" in fact.lower() or "Lisbon" in fact or "cloud" in fact]
    assert "The user live in Lyon" in active  # an unnamed person's turn is the account's owner, as before


def _remembered(session, embedder, user: str, chunks: list[dict]) -> list[str]:
    """Each chunk's facts remembered in turn; the user's facts still current, sorted."""
    for chunk in chunks:
        for fact in chunk["facts"]:
            remember_fact(session, embedder, user, fact["text"])
    return sorted(f.text for f in list_facts(session, user))
