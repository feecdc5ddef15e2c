"""Changes the twentieth and twenty-first blind people told that left the old fact standing (read in the twenty-first
session): a new post at work ("they moved me to days", "got transferred to the ER", "that's me off the 75"), a date
"moving" to another month, a learner's "finally die", and someone who left the part they had ("X has left us, he got
a job at …", "X gone a Canada") told of a part said as "mi assistant" or "the one who helps me". The 1.5B, given both
facts, answered with the old one ("You work nights right now, 6pm to 6am")."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from services.act.wording import plain_reply
from services.llm.guard import names_refused
from services.memory.changes import change_in
from services.memory.facts import list_facts, remember_fact
from services.memory.from_words import chunk_from_words
from services.memory.refusals import refused_things
from tests.memory_builders import create_user


def _ends(new: str, old: str) -> bool:
    change = change_in(new)
    return change is not None and change.ends(old)


def _facts(said: str) -> list[str]:
    return [fact["text"] for fact in chunk_from_words(said)["facts"]]


@pytest.mark.parametrize(("said", "old"), [
    ("Well y'all, they FINALLY moved me to days. 7am to 3pm, Monday thru Friday.",
     "The user work nights right now, 6pm to 6am, four on three off"),
    ("update: I got transferred to the ER starting this week, stressful but better pay",
     "The user is assigned in the pedia ward right now, private hospital in Sampaloc"),
    ("Well that's me off the 75. They've moved me onto the airport express, the 500.",
     "The user is on the 75 the now, Castlemilk up to Milngavie and back, all day"),
    ("Good news, management switched me to earlies from next week.",
     "The user is on lates at the moment, 2 till 10"),
    ("I've been rotated onto the cardiology ward, starting Monday.",
     "The user is currently on the surgical ward, nights mostly"),
])
def test_a_new_post_at_work_ends_the_one_they_had_for_now(said: str, old: str) -> None:
    assert any(_ends(fact, old) for fact in _facts(said))


@pytest.mark.parametrize(("said", "old"), [
    ("They moved me to days, finally!", "The user's sister works nights right now at the depot"),  # hers, not theirs
    ("They moved me to days, finally!", "The user is reading Dune right now"),  # no post
    ("We moved to Leeds last month.", "The user works nights right now at the depot"),  # a home, not a post
    ("I got moved into a new flat by the council.", "The user works nights right now at the depot"),
])
def test_what_is_not_their_post_stays(said: str, old: str) -> None:
    assert not any(_ends(fact, old) for fact in _facts(said))


def test_a_date_moving_to_another_month_ends_the_old_date() -> None:
    said = "Paper is rejected so defense is moving to September, professor said do more experiments."
    assert any(_ends(fact, "The user's thesis defense is planned for June") for fact in _facts(said))
    assert any(_ends(fact, "The user's viva is in March at 10am")
               for fact in _facts("The viva is moving to April because my examiner is ill."))
    assert not any(_ends(fact, "The user's thesis defense is planned for June")
                   for fact in _facts("We are moving to Daejeon next year."))


def test_a_thing_that_finally_die_is_told_and_ends() -> None:
    facts = _facts("Ok Niva finally die. Mechanic say engine is finished, not worth to repair.")
    assert any(_ends(fact, "The user's car is old Niva, 1994, It is like member of family") for fact in facts)


@pytest.mark.parametrize(("said", "old"), [
    ("Otieno has left us, he got a job at the county referral hospital in Kisumu.",
     "Otieno is the one who helps the user at the counter and the till, very honest young man"),
    ("Bad news. Kerry-Ann gone a Canada, she get a job in Toronto.",
     "Mi assistant is Kerry-Ann, she good wid braids, better than the user fi true"),
    ("Sadly Mick has emigrated to Perth, so no more Thursday sessions.", "The user's trainer Mick is tough but fair"),
    ("Priya got a new job in Leeds, leaving Friday.", "The user's team lead Priya is lovely"),
])
def test_someone_who_left_their_part_is_no_longer_in_it(said: str, old: str) -> None:
    assert any(_ends(fact, old) for fact in _facts(said))


@pytest.mark.parametrize(("said", "old"), [
    ("My sister Ana got a job in Leeds!", "The user's sister Ana lives in York"),  # still the sister, where she lived
    ("My dad Joe has retired at last.", "The user's dad Joe has a bad back"),
    # bed is no place abroad
    ("Kerry-Ann has gone to bed early.", "Mi assistant is Kerry-Ann, she good wid braids, better than the user"),
])
def test_family_and_bedtimes_end_nothing(said: str, old: str) -> None:
    assert not any(_ends(fact, old) for fact in _facts(said))


@pytest.fixture()
def session(db_engine):  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        create_user(session, user_id="jo")
        yield session
        session.rollback()


@pytest.mark.integration
def test_the_hours_and_the_helper_asked_about_are_the_new_ones(session, hash_embedder) -> None:
    for said in ("I work nights right now, 6pm to 6am, four on three off.",
                 "Otieno is the one who helps me at the counter and the till, very honest young man.",
                 "My thesis defense is planned for June."):
        for fact in _facts(said):
            remember_fact(session, hash_embedder, "jo", fact)
    for said in ("Well y'all, they FINALLY moved me to days. 7am to 3pm, Monday thru Friday.",
                 "Otieno has left us, he got a job at the county hospital. The new girl is Chebet.",
                 "Paper is rejected so defense is moving to September."):
        for fact in _facts(said):
            remember_fact(session, hash_embedder, "jo", fact)
    texts = " | ".join(fact.text for fact in list_facts(session, "jo"))
    assert "nights" not in texts and "helps the user at the counter" not in texts and "June" not in texts
    assert "days, 7am to 3pm" in texts and "Chebet" in texts and "September" in texts


def test_things_listed_with_no_then_pointed_back_at_are_refused() -> None:
    """"Doctor in Manila said no running, no jumping, so don't suggest me those ok": the 1.5B's ship-gym workout
    began with "5 minutes of light cardio (e.g., walking, jogging)" and nothing refused was read from the fact."""
    refused = frozenset(refused_things("Doctor in Manila said no running, no jumping, so don't suggest the user those"))
    assert names_refused("Warm-up: 5 minutes of light cardio (e.g., walking, jogging)", refused) is not None
    assert names_refused("Then 3 rounds of jumping jacks.", refused) is not None
    assert names_refused("Try planks, push-ups and a rowing machine.", refused) is None
    no_dairy = "No dairy and no gluten for the user, please never offer the user those"
    assert refused_things(no_dairy) >= {"milk", "bread"}
    assert not refused_things("The user said no problem, don't suggest that again")  # a saying, no thing


@pytest.mark.parametrize(("text", "said"), [
    # people21's confirmations ran the reason on into the time: "… they have delayed two weeks now on Friday …".
    ("call the KEMSA supplier about the amoxicillin order, they have delayed two weeks now",
     "Done: I'll remind you on Friday 04 December 2026, 07:00 UTC to call the KEMSA supplier about the amoxicillin "
     "order, they have delayed two weeks now."),
    ("renew my PRC license online, it expires this month and I keep forgeting",
     "Done: I'll remind you on Friday 04 December 2026, 07:00 UTC to renew your PRC license online, it expires this "
     "month and you keep forgeting."),
])
def test_a_reminder_is_confirmed_with_its_time_first_and_in_the_persons_words_said_back(text: str, said: str) -> None:
    entry = {"skill": "schedule", "ok": True,
             "result": {"created": {"text": text, "when": "Friday 04 December 2026, 07:00 UTC", "recurrence": None}}}
    assert plain_reply(entry) == said


def test_a_repeating_reminder_says_how_often_in_words() -> None:
    entry = {"skill": "schedule", "ok": True,
             "result": {"created": {"text": "plan my week", "when": "Sunday 06 December 2026, 18:00 UTC",
                                    "recurrence": "FREQ=WEEKLY;BYDAY=SU"}}}
    assert plain_reply(entry) == ("Done: I'll remind you every Sunday, from Sunday 06 December 2026, 18:00 UTC, to "
                                  "plan your week.")


@pytest.mark.parametrize(("said", "fact"), [
    ("The wife is Marg. We're married 44 years on the 12th of October.", "The user's wife is Marg"),  # wilf: lost
    ("Me and the missus are off to Crete in June", "The user and the user's missus are off to Crete in June"),
    ("The hubby's birthday is on the 3rd of May", "The user's hubby's birthday is on the 3rd of May"),
])
def test_the_wife_said_as_people_say_it_is_the_persons_wife(said: str, fact: str) -> None:
    assert fact in _facts(said)


def test_the_wife_of_someone_else_is_not_theirs() -> None:
    assert "The wife of the user's neighbour is a nurse" in _facts("The wife of my neighbour is a nurse.")


@pytest.mark.parametrize(("said", "kept"), [
    # colm (people21): "What's Oisín going to be studying above in Galway?" had nothing to find.
    ("The young lad, Oisín, Aoife's son, he's after getting into the university in Galway. Marine science, if you "
     "don't mind.", "The young lad, Oisín, Aoife's son, he's after getting into the university in Galway, Marine "
                    "science"),
    ("Priya's daughter got a place at Leeds uni", "Priya's daughter got a place at Leeds uni"),
])
def test_news_of_someone_named_beside_who_they_are_is_kept(said: str, kept: str) -> None:
    assert any(fact.startswith(kept) for fact in _facts(said))
