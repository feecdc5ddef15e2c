"""What the fifteenth session's people (aigerim, padraig, lupe, ravindu, solveig) lost, each in its general form:
someone named who left the part they had in the person's life ("Dr Hanrahan has retired", "valeria moved out") or a
part with someone new ("the new deputy head is Ingrid") left the old one in the notes, and the 1.5B addressed a note
to the old doctor, roommate and deputy; "originally from …" without its "I'm" was dropped; "Tell me what is in my
joining list" looked for a list called "what is in my joining"; "on 3 January" was no time to the router; an offer
cut before a refused thing kept only its lead-in ("Here's an idea:\n1."); and a question typed in Norwegian was
answered in Norwegian by someone who had asked to be answered in English."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from services.act.fastpath import plain_action
from services.llm.guard import offer_without
from services.memory.answer_form import answer_language
from services.memory.changes import change_in
from services.memory.context import Remembered, assemble
from services.memory.facts import list_facts, remember_fact
from services.memory.from_words import chunk_from_words
from services.memory.models import Fact
from services.queues import MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from tests.llm_steps import Reply
from tests.memory_builders import create_user
from tests.test_act_chat import chat, message_of
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture

NOW = datetime(2030, 1, 15, 9, 0, tzinfo=UTC)


def _ends(new: str, old: str) -> bool:
    change = change_in(new)
    return change is not None and change.ends(old)


def test_someone_who_left_their_part_ends_the_facts_giving_them_that_part_only() -> None:
    gp = "The user's GP, Dr Hanrahan, says the sun will do the user's knees good"
    assert _ends("Dr Hanrahan has retired himself, God bless him", gp)
    assert _ends("Valeria moved out 😭 she went to live w her bf", "The user's roomie valeria is sooo messy omg")
    deputy = "The user's deputy head is Lars Eriksen, he is very good with the older pupils"
    assert _ends("Lars has accepted a position as headteacher in Bodø", deputy)
    assert _ends("Our builder mick has handed in his notice", "The user's builder is Mick, he is fixing the roof")
    # What else names them stays true: they left a part, not the person's life.
    assert not _ends("Lars has accepted a position as headteacher in Bodø", "Lars's daughter Ella sings")
    assert not _ends("Dr Hanrahan has retired himself", "Valeria loves tacos")
    assert change_in("The user retired in April") is None  # the person's own retirement names nobody else
    assert change_in("The user moved out of the city") is None or not _ends("The user moved out of the city", gp)


def test_a_part_with_someone_new_ends_the_old_holders_facts_and_nothing_else() -> None:
    deputy = "The user's deputy head is Lars Eriksen, he is very good with the older pupils"
    own_job = "The user is the headteacher (rektor) at a primary school in Tromsø"
    assert _ends("The new deputy head is Ingrid Hovland, she started on Monday", deputy)
    assert not _ends("The new deputy head is Ingrid Hovland, she started on Monday", own_job)  # "head" alone
    assert _ends("Ingrid is our new deputy head", deputy)
    assert _ends("New roomie is ximena, shes in medicine", "The user's roomie valeria is sooo messy omg")
    assert not _ends("The new deputy head is Ingrid Hovland", "The new deputy head Ingrid Hovland is from Alta")
    assert not _ends("The user's roomie said the new season is great", "The user's roomie valeria is messy")
    # Conversation with no one new in it (LoCoMo's friends): none of these names a part or someone who left.
    for said in ("Trying new stuff is a great way to push yourself", "Exploring new cities is always so much fun",
                 "I may have found a job at a tech company I like"):
        change = change_in(said)
        assert change is None or not (change.part or change.left)


@pytest.mark.integration
def test_the_people_who_left_are_no_longer_the_persons_gp_roomie_or_deputy(db_engine, hash_embedder) -> None:
    told = ["My GP, Dr Hanrahan, says the sun will do my knees good.", "my roomie valeria is sooo messy omg",
            "My deputy head is Lars Eriksen, he is very good with the older pupils.",
            "Well, news from the surgery. Dr Hanrahan has retired himself, God bless him.",
            "UPDATE valeria moved out 😭 she went to live w her bf", "new roomie is ximena, shes in medicine",
            "The new deputy head is Ingrid Hovland, she started on Monday."]
    with Session(db_engine) as session:
        create_user(session, user_id="people15-left")
        for message in told:
            for fact in chunk_from_words(message)["facts"]:
                remember_fact(session, hash_embedder, "people15-left", fact["text"])
        active = " | ".join(fact.text for fact in list_facts(session, "people15-left"))
        assert "GP" not in active and "messy" not in active and "very good with the older pupils" not in active
        assert "ximena" in active and "Ingrid" in active and "retired" in active  # (no new GP was named)
        # Someone new in the part: the news that the old holder left is history too.
        assert "moved out" not in active
        session.rollback()


def test_where_the_person_is_originally_from_is_kept_without_its_i_am() -> None:
    facts = [fact["text"] for fact in chunk_from_words("originally from mazatlán tho, i miss the beach sm")["facts"]]
    assert facts[0] == "The user is originally from mazatlán tho"
    assert [fact["text"] for fact in chunk_from_words("Born and raised in Cork.")["facts"]] == [
        "The user is born and raised in Cork"]


@pytest.mark.parametrize("said", ["Tell me what is in my joining list.", "show me what's on the joining list pls",
                                  "read me what we have on our joining list"])
def test_a_list_asked_for_with_tell_me_what_is_in_it_is_read_by_its_name(said: str) -> None:
    action = plain_action(said, collect_signals(RoutingContext(text=said)), NOW, UTC)
    assert action is not None and action.arguments == {"operation": "view", "name": "joining"}


def test_the_list_is_no_list_called_the() -> None:
    """After a question, "Put him on the list." added "him" to a list called "the"."""
    for said in ("Put him on the list.", "add milk to the list", "put eggs on my list please"):
        assert plain_action(said, collect_signals(RoutingContext(text=said)), NOW, UTC) is None
    said = "put eggs on the shopping list please"
    assert plain_action(said, collect_signals(RoutingContext(text=said)), NOW, UTC).arguments["name"] == "shopping"


@pytest.mark.parametrize("text", ["Remind me on 3 January to renew my driving licence before I go.",
                                  "remind me 14 feb to book the vet", "Please remind me on 2 May to pay the rent"])
def test_a_reminder_dated_day_before_month_routes_to_the_schedule_skill(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert routes(routers, text) == {("ACT", "schedule")}


def test_a_reminder_for_a_day_without_its_hour_is_set_for_that_mornings_nine_without_the_planner() -> None:
    """"Remind me on 3 January to renew my driving licence" reached the planner, which asked to confirm 09:00 (the
    person never answered, so nothing was set); for "on the 10th of March" it set 09:00 without asking."""
    def due(text: str) -> str | None:
        action = plain_action(text, collect_signals(RoutingContext(text=text)), NOW, UTC)
        return None if action is None else action.arguments["due"]

    assert due("Remind me on 3 January to renew my driving licence before I go.") == "on 3 january at 9"
    assert due("remind me to call mom on friday") == "on friday at 9"
    assert due("remind me on friday at 6 to call mom") == "on friday at 6"  # an hour given is kept
    assert due("remind me this weekend to call mom") is None  # no day to take the morning of: the planner asks
    assert due("remind me to call mom") is None


def test_a_clock_time_of_an_earlier_turn_does_not_hold_back_a_reminder_whose_message_names_its_day() -> None:
    """The fast path's "on 3 january at 9" waited for a "yes" that never came: the critic compared it with "09:10",
    the time of a flight told two turns before."""
    from services.act.config import CriticConfig
    from services.act.critic import Critic
    from tests.test_act_units import SKILLS

    asked = "Remind me on 3 January to renew my driving licence before I go."
    evidence = f"{asked} Flight to Singapore is on 14 January, 09:10 morning from Colombo."
    reminder = {"operation": "create", "kind": "reminder", "text": "renew my driving licence before I go",
                "due": "on 3 january at 9"}
    critic = Critic(CriticConfig(confirm_below=0.7))
    assert critic.assess(SKILLS["schedule"], reminder, evidence, NOW, UTC, asked).run
    # A time the message itself names still has to match; a message naming none is checked against the turns.
    at_ten = {**reminder, "due": "on 3 january at 10"}
    assert not critic.assess(SKILLS["schedule"], at_ten, "Remind me on 3 January at 9 to renew my driving licence "
                             "before I go", NOW, UTC, "Remind me on 3 January at 9 to renew my driving licence").run
    assert not critic.assess(SKILLS["schedule"], at_ten, f"{evidence} renew my driving licence before I go at 9",
                             NOW, UTC, "remind me to renew my driving licence before I go then").run


def test_an_offer_cut_to_its_lead_in_offers_nothing_so_it_is_written_again() -> None:
    """"Here's a simple dinner idea:\n1. **Grilled Chicken Salad**" for a vegetarian was sent as "Here's a simple
    dinner idea:\n1." (nothing offered) instead of being written again without the meat."""
    meat = frozenset({"chicken", "beef"})
    assert offer_without("Sure! Here's a simple dinner idea for you:\n1. **Grilled Chicken Salad**:", meat) is None
    assert offer_without("Two ideas:\n- lentil soup\n- chicken wings", meat) == "Two ideas:\n- lentil soup."
    assert offer_without("You can try a bean chili or a chicken curry", meat) == "You can try a bean chili."


@pytest.mark.parametrize(("fact", "language"), [
    ("A small request: please always answer the user in English, even if the user write to you in Norwegian",
     "English"),
    ("Please reply to me in Spanish from now on", "Spanish"), ("talk to me in french pls", "French"),
    ("The user would like you to write in German", "German"), ("speak English with me please", "English"),
    ("The user speaks French with the user's mother", ""), ("The user writes in Norwegian at work", ""),
    ("The user's daughter answers in Welsh at school", ""), ("can you answer in French?", ""),
    ("The user is learning Spanish", ""),
])
def test_the_language_asked_for_is_read_from_a_request_to_the_assistant_only(fact: str, language: str) -> None:
    assert answer_language(_told(fact)) == language


def test_the_newest_request_for_a_language_wins() -> None:
    assert answer_language(_told("Please answer me in Spanish", "Actually, reply to me in English from now on")) == (
        "English")
    newest_first = _told("Please answer me in Spanish", "Actually, reply to me in English from now on")[::-1]
    assert answer_language(newest_first) == "English"  # the one told later, whatever the order they are read in


def _told(*texts: str) -> list[Remembered]:
    """The facts as told one day after another."""
    return [Remembered(number, text, NOW + timedelta(days=number)) for number, text in enumerate(texts)]


@pytest.mark.integration
def test_an_old_request_for_a_language_is_read_on_every_turn(db_engine, hash_embedder) -> None:
    with Session(db_engine) as session:
        remember_fact(session, hash_embedder, "people15-solveig", "Please always answer the user in English")
        remember_fact(session, hash_embedder, "people15-other", "Please always answer the user in French")
        for number in range(20):
            remember_fact(session, hash_embedder, "people15-solveig", f"The user visited island number {number}")
        asked = assemble(session, hash_embedder, "people15-solveig", "Hva bør jeg pakke?", compact=True)
        assert asked.answer_in == "English"
        assert assemble(session, hash_embedder, "people15-solveig", "Hva bør jeg pakke?").answer_in == ""  # full
        session.rollback()


@pytest.fixture
def settings(settings):  # type: ignore[no-untyped-def]
    return replace(settings, llm_profile="compact")


def _tell(client, run_jobs, fake_llm, text: str) -> None:  # type: ignore[no-untyped-def]
    fake_llm.script_stream(Reply("Noted!"))
    chat(client, run_jobs, text)
    run_jobs((MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE))


@pytest.mark.integration
@pytest.mark.usefixtures("person")
def test_a_question_in_another_language_is_answered_in_the_one_asked_for(client, run_jobs, fake_llm) -> None:
    _tell(client, run_jobs, fake_llm, "Please always answer me in English, even if I write to you in Norwegian.")
    assert client.post("/threads").status_code == 201
    fake_llm.script_stream(Reply("Pack warm layers and water."))
    frames, _ = chat(client, run_jobs, "Hva bør jeg pakke til en dagstur på fjellet i morgen?")
    assert message_of(frames)["text"] == "Pack warm layers and water."
    asked = fake_llm.requests[-1]["messages"]
    assert asked[-2]["role"] == "system" and "reply in English" in asked[-2]["content"]
    assert asked[-1]["content"].startswith("Hva bør jeg pakke")


@pytest.mark.integration
@pytest.mark.usefixtures("person")
def test_a_new_deputy_replaces_the_old_one_in_the_notes(client, run_jobs, fake_llm, db_engine) -> None:
    _tell(client, run_jobs, fake_llm, "My deputy head is Lars Eriksen, he is very good with the older pupils.")
    _tell(client, run_jobs, fake_llm, "Lars has accepted a position as headteacher in Bodø. Sad for us.")
    _tell(client, run_jobs, fake_llm, "The new deputy head is Ingrid Hovland, she started on Monday.")
    with db_engine.connect() as connection:
        active = " | ".join(connection.execute(select(Fact.text).where(Fact.superseded_at.is_(None))).scalars())
    assert "Ingrid" in active and "Lars" not in active
    assert client.post("/threads").status_code == 201
    fake_llm.script_stream(Reply("Dear Ingrid, …"))
    chat(client, run_jobs, "Write a short email handing the school over to my deputy, addressed by first name.")
    notes = " ".join(m["content"] for m in fake_llm.requests[-1]["messages"] if "<memory>" in m["content"])
    assert "Ingrid" in notes and "Lars" not in notes
    assert "answer them in" not in str(fake_llm.requests[-1]["messages"])  # no language was asked for


def test_a_clarifying_reply_that_asks_nothing_is_replaced_by_the_question() -> None:
    """Told to ask for what is missing, the 1.5B answered 13 of 30 underspecified commands with a promise ("Sure, I'll
    add him to the list.") and nothing was done: the person was told it was."""
    from services.llm.guard import ScaffoldGuard

    sent: list[str] = []
    guard = ScaffoldGuard(sent.append, message="Put him on the list.", must_ask="Which one do you mean?")
    guard("Sure, I'll add ")
    guard("him to the list.")
    assert guard.finish("Sure, I'll add him to the list.") == "Which one do you mean?" and guard.rewritten
    asking = ScaffoldGuard(sent.append, message="Put him on the list.", must_ask="Which one do you mean?")
    assert asking.finish("Who should I add, and to which list?") == "Who should I add, and to which list?"
    plain = ScaffoldGuard(sent.append, message="Thanks!")  # any other turn need not ask
    assert plain.finish("You're welcome.") == "You're welcome."


@pytest.mark.integration
@pytest.mark.usefixtures("person")
def test_an_underspecified_command_is_answered_with_a_question_not_a_promise(client, run_jobs, fake_llm) -> None:
    fake_llm.script_stream(Reply("Sure, I'll add him to the list."))
    frames, _ = chat(client, run_jobs, "Put him on the list.")
    reply = message_of(frames)["text"]
    assert "?" in reply and "I'll add" not in reply
    assert "I don't have anything earlier" in reply  # "him" points at no one said
    fake_llm.script_stream(Reply("Who should I put on which list?"))
    assert client.post("/threads").status_code == 201  # (in the same thread it would answer the question asked)
    frames, _ = chat(client, run_jobs, "Put him on the list.")
    assert message_of(frames)["text"] == "Who should I put on which list?"  # the model's own question stays
