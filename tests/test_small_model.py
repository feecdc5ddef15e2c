"""The small default model's shapes: what its prompts hold, the echo guard, the chunk rules.

Supersession of facts (a new job, a move, something that ended) is tested in test_memory_facts.py.
"""

from __future__ import annotations

import datetime as dt
from functools import partial

import pytest

from services.act.fastpath import answers_from_memory
from services.errors import EchoedMessage
from services.llm.guard import ScaffoldGuard
from services.llm.profile import CompactBudgets, compact_messages
from services.memory.config import MemoryConfig
from services.memory.context import Personal, render
from services.memory.recall import RecallHit
from services.memory.second_person import to_you
from services.prompts import PromptLibrary
from services.settings import PROJECT_ROOT
from tests.llm_steps import Reply


def _at(day: str) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)


def _fact(text: str, day: str, item_id: int) -> RecallHit:
    return RecallHit(text, "fact", 1.0, {"relevance": 1.0}, [], [], item_id, at=_at(day))


def _notes() -> str:
    facts = [_fact("The user moved to Berlin", "2026-11-20", 2), _fact("The user lives in Porto", "2026-10-10", 1),
             _fact("The user's sister Ana has her birthday on 14 March", "2026-11-01", 3)]
    turn = RecallHit("", "exchange", 1.0, {"relevance": 1.0}, [7], [], 7, at=_at("2026-11-15"), lines=[
        {"speaker": "user", "text": "I ran my first half marathon in 2 hours 5 minutes", "at": _at("2026-11-15")},
        {"speaker": "assistant", "text": "You must be a professional runner!", "at": _at("2026-11-15")},
    ])
    return render(Personal(), facts, [], [turn], MemoryConfig(), 300, compact=True)


def test_the_notes_are_lines_under_their_day_oldest_first_said_to_the_person() -> None:
    notes = _notes().splitlines()
    assert notes == [
        "10 October 2026:", "- You live in Porto.",
        "1 November 2026:", "- Your sister Ana has her birthday on 14 March.",
        "15 November 2026:", '- you said "I ran my first half marathon in 2 hours 5 minutes"',
        "20 November 2026:", "- You moved to Berlin.",  # the newer fact last: the last word on where they live
    ]
    assert "professional runner" not in _notes()  # the assistant's old words are no evidence about the person


def test_named_speakers_are_quoted_by_name_and_their_relative_days_dated() -> None:
    """An imported talk between two people: each one's words reach the notes under their name, the assistant's
    never; "yesterday" gets the day it meant (a model reading it weeks later cannot count back)."""
    turn = RecallHit("", "exchange", 1.0, {"relevance": 1.0}, [8], [], 8, at=_at("2023-10-20"), lines=[
        {"speaker": "Melanie", "text": "We went camping yesterday!", "at": _at("2023-10-20")},
        {"speaker": "assistant", "text": "How lovely, camping is great.", "at": _at("2023-10-20")},
        {"speaker": "Caroline", "text": "Nice, I stayed home.", "at": _at("2023-10-20")},
    ])
    notes = render(Personal(), [], [], [turn], MemoryConfig(), 300, compact=True).splitlines()
    assert notes == ["20 October 2023:", '- Melanie said "We went camping yesterday (19 October 2023)!"',
                     '- Caroline said "Nice, I stayed home."']


def test_a_day_heads_its_lines_once() -> None:
    """Qwen's tokenizer reads a date as ten tokens: twelve facts of one day carry it once, not twelve times."""
    facts = [_fact(f"The user has hobby number {n}", "2026-11-20", n) for n in range(1, 6)]
    facts.append(_fact("The user moved to Berlin", "2026-11-21", 9))
    notes = render(Personal(), facts, [], [], MemoryConfig(), 300, compact=True)
    assert notes.count("20 November 2026") == 1 and notes.count("21 November 2026") == 1
    assert notes.splitlines()[-2:] == ["21 November 2026:", "- You moved to Berlin."]


def test_the_system_message_stays_first_and_the_notes_come_just_before_the_message() -> None:
    history = [{"user": "My name is Dana", "reply": "Nice to meet you, Dana!"}]
    messages = compact_messages("You are Engram.", history, _notes(), "Where do I live?", CompactBudgets())
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "system", "user"]
    assert messages[0]["content"] == "You are Engram."  # stable: llama.cpp's prompt cache keeps it and the history
    assert messages[3]["content"].startswith("Notes from earlier conversations")
    assert "20 November 2026:\n- You moved to Berlin." in messages[3]["content"]
    assert messages[-1] == {"role": "user", "content": "Where do I live?"}


def test_the_respond_prompt_asks_for_you_no_echo_and_no_borrowed_names() -> None:
    system = PromptLibrary(PROJECT_ROOT / "prompts").render("compact/respond")
    assert "Never repeat their message" in system
    assert "people and pets in their life, not the person" in system


@pytest.mark.parametrize(("fact", "said"), [
    ("The user lives in Lisbon", "You live in Lisbon"),
    ("The user's dog is called Pixel", "Your dog is called Pixel"),
    ("The user is allergic to peanuts", "You are allergic to peanuts"),
    ("The user teaches maths", "You teach maths"),
    ("The user does not drink alcohol", "You do not drink alcohol"),
    ("Ana's birthday is on 14 March", "Ana's birthday is on 14 March"),
])
def test_facts_are_said_to_the_person(fact: str, said: str) -> None:
    assert to_you(fact) == said


def _guarded(message: str, chunks: list[str]) -> tuple[list[str], str]:
    sent: list[str] = []
    guard = ScaffoldGuard(sent.append, message=message)
    for chunk in chunks:
        guard(chunk)
    return sent, guard.finish("".join(chunks))


def test_a_reply_that_repeats_the_message_is_sent_without_the_repeat() -> None:
    sent, final = _guarded("I have a dog called Pixel", ["I have a", " dog called", " Pixel. What", " a lovely name!"])
    assert final == "What a lovely name!"
    assert "".join(sent) == "What a lovely name!"  # the repeat never reached the person


def test_a_reply_that_is_only_the_message_is_malformed_so_it_is_retried() -> None:
    with pytest.raises(EchoedMessage, match="the person's message"):
        _guarded("I have a dog called Pixel", ["I have a dog", " called Pixel."])


def test_the_retry_after_an_echo_is_told_not_to_repeat_the_message(fake_llm) -> None:
    """The scripted server echoes once; the second request must carry the note, and its reply is the answer."""
    from services.llm.client import LLMClient
    from services.llm.fallback import ECHO_NOTE, generate_with_fallback
    from services.llm.roles import RoleConfig

    fake_llm.script_stream(Reply("I work as a nurse at the city hospital."), Reply("Nursing is important work!"))
    client = LLMClient(base_url=fake_llm.url, api_key=None, roles={"respond": RoleConfig(stream=True)})
    message = "I work as a nurse at the city hospital"
    completion, fallback = generate_with_fallback(
        client, "respond", [{"role": "system", "content": "Be brief."}, {"role": "user", "content": message}],
        lambda _text: None, guard=partial(ScaffoldGuard, message=message))
    assert not fallback and completion.text == "Nursing is important work!"
    retried = fake_llm.requests[-1]["messages"]
    assert retried[-2] == {"role": "system", "content": ECHO_NOTE} and retried[-1]["content"] == message


def test_a_reply_that_starts_like_the_message_but_goes_elsewhere_is_kept_whole() -> None:
    sent, final = _guarded("I have a dog called Pixel", ["I have", " a cat", " too!"])
    assert final == "I have a cat too!" and "".join(sent) == final


def test_a_memory_question_sent_to_act_is_answered_from_memory_but_stored_things_are_not() -> None:
    asks = {"question": 1.0, "skill_any": 1.0}
    assert answers_from_memory("What is my dog's name?", {**asks, "skill_recall": 1.0})
    assert answers_from_memory("Who was I supposed to ring tomorrow?", {**asks, "skill_remind": 1.0})  # in the notes
    assert not answers_from_memory("What did I ask you to remind me about tomorrow?",
                                   {**asks, "skill_recall": 1.0, "skill_remind": 1.0})  # read from the reminders
    assert answers_from_memory("What do I need to get from the hardware store?", {**asks, "skill_list": 1.0})
    assert not answers_from_memory("What's on my shopping list?", {**asks, "skill_list": 1.0})  # read exactly
    assert not answers_from_memory("Can you remind me tomorrow at 9 to call mum?", {**asks, "skill_remind": 1.0})
    # "Remind me, what …" asks what was told (the planner given one set the person's last reminder again).
    assert answers_from_memory("Remind me please, who is my landlord these days?",
                               {**asks, "skill_recall": 1.0, "skill_remind": 1.0})
    assert not answers_from_memory("remind me what to pack at 6 tomorrow?",
                                   {**asks, "skill_remind": 1.0, "has_time": 1.0})  # a time: a reminder to set
    assert not answers_from_memory("Can you delete my dentist reminder?", {**asks, "skill_manage": 1.0})
    assert not answers_from_memory("Tell me what I said about Rome", {"skill_recall": 1.0})  # no question
    assert not answers_from_memory("What's the capital of Peru?", asks)  # not about anything remembered


def test_a_message_said_back_in_the_second_person_is_an_echo() -> None:
    """"I play tennis at the club" → "You play tennis at the club." is the message again, not a reply."""
    with pytest.raises(EchoedMessage):
        _guarded("I play tennis twice a week at the club.", ["You play tennis", " twice a week at the club."])
    with pytest.raises(EchoedMessage):
        _guarded("It's tiring but I love it way more than mortgages.",
                 ["You're right, it's tiring but you love it way more than mortgages."])
    sent, final = _guarded("Where do I live?", ["You live in Leeds."])
    assert final == "You live in Leeds."


@pytest.mark.parametrize(("message", "echoes", "said"), [
    # A statement said back twice: what was said is taken in, and saying so is true (the apology would not be).
    ("I work as a nurse at the city hospital", ("You work as a nurse at the city hospital.",
                                                "You work as a nurse at the city hospital!"), "noted"),
    # A question said back twice: thanking the person for telling would be false.
    ("Who was I supposed to ring tomorrow?", ("Who were you supposed to ring tomorrow?",
                                             "You were supposed to ring tomorrow."), "unsure"),
])
def test_two_echoes_end_in_a_true_plain_reply_not_the_apology(fake_llm, message: str, echoes: tuple[str, str],
                                                              said: str) -> None:
    from services.llm.client import LLMClient
    from services.llm.fallback import NOTED_REPLY, UNSURE_REPLY, generate_with_fallback
    from services.llm.roles import RoleConfig

    fake_llm.script_stream(*(Reply(echo) for echo in echoes))
    client = LLMClient(base_url=fake_llm.url, api_key=None, roles={"respond": RoleConfig(stream=True)})
    sent: list[str] = []
    completion, fallback = generate_with_fallback(
        client, "respond", [{"role": "system", "content": "Be brief."}, {"role": "user", "content": message}],
        sent.append, guard=partial(ScaffoldGuard, message=message))
    expected = NOTED_REPLY if said == "noted" else UNSURE_REPLY
    assert not fallback and completion.text == expected and "".join(sent).endswith(expected)


def test_facts_from_words_are_the_persons_own_telling_sentences() -> None:
    from services.memory.from_words import chunk_from_words

    def facts(message: str) -> list[str]:
        return [fact["text"] for fact in chunk_from_words(message)["facts"]]
    assert facts("Oh and my sister Funmi is getting married on the 14th of June, I'm a bridesmaid!") == [
        "The user's sister Funmi is getting married on the 14th of June", "The user is a bridesmaid"]
    assert facts("Hi there, I'm Hannah. I live in Denver.") == ["The user is Hannah", "The user live in Denver"]
    assert facts("I have a dog called Rufus and I work as a nurse") == [  # a clause of its own, a fact of its own
        "The user have a dog called Rufus", "The user work as a nurse"]
    assert facts("My partner Sam and I are going to Japan in April") == [
        "The user's partner Sam and the user are going to Japan in April"]
    assert facts("Kuba is seven and completely obsessed with football") == [
        "Kuba is seven and completely obsessed with football"]  # someone they name
    assert facts("The grandkids are coming to stay on the 22nd of December.") == [
        "The grandkids are coming to stay on the 22nd of December"]
    assert facts("Remind me tomorrow at 8 to print the worksheets") == []  # a request tells nothing
    assert facts("create a list for Chidi's 45th birthday party with balloons, a cake and candles") == []
    assert facts("Where do I live? Can you check?") == [] and facts("what's on my camping list") == []
    assert facts("Thanks!") == [] and facts("The weather is lovely today.") == []  # nothing about them
    assert facts("ok I did it, I dropped architecture") == ["The user dropped architecture"]  # "I did it" says nothing
    assert facts("The grand opening is on the 1st of September, fingers crossed.") == [  # a date they tell
        "The grand opening is on the 1st of September, fingers crossed"]
    # A clause that points back stays with what it points at ("The user never eat them" alone told nothing).
    assert facts("Fish and seafood make me really sick, I never eat them.") == [
        "Fish and seafood make the user really sick, the user never eat them"]
    assert facts("I had knee surgery, so I stopped playing tennis. I swim now instead.") == [
        "The user had knee surgery", "The user stopped playing tennis, the user swim now instead"]
    # "Now I …" tells what the clause before changed: alone, "Now the user is in quality control" lost its factory.
    assert facts("Good news, I changed section at the plant! Now I am in the paint shop, no more welding") == [
        "The user changed section at the plant, Now the user is in the paint shop, no more welding"]
    assert chunk_from_words("I moved to Leeds")["gists"] == ["The user said: I moved to Leeds"]


def test_a_sentence_that_leaves_out_its_i_or_only_gives_a_time_is_still_a_fact() -> None:
    """Chat drops the "I" ("got moved to the day shift!!"), says what ended in two words ("no more nights") and
    gives a time on its own ("7am to 5pm."): each was lost, and the old shift stayed the answer."""
    from services.memory.from_words import chunk_from_words

    def facts(message: str) -> list[str]:
        return [fact["text"] for fact in chunk_from_words(message)["facts"]]
    assert facts("got moved to the day shift!! 7am to 5pm. no more nights, I actually get to do school drop off") == [
        "The user got moved to the day shift, 7am to 5pm", "No more nights for the user",
        "The user actually get to do school drop off"]
    assert facts("Good news: just finished my first marathon!") == ["The user just finished the user's first marathon"]
    assert facts("dinner is a fight every day btw. Amara won't eat anything green.") == [
        "Amara won't eat anything green"]  # someone they name, with what she won't do
    assert facts("love it") == [] and facts("got it, thanks") == []  # nothing told
    # What they run, own, where they work or live, told without the "I" (the mechanic's trade was lost).
    assert facts("g'day. run a bike shop in geelong. own the building too") == [
        "The user run a bike shop in geelong", "The user own the building too"]
    # A sentence without a verb goes on with the one before, in the same fact (alone, "club quattro on saturday the
    # 12th of december" said nothing of what happens then); a greeting with "my friend" is no friend of theirs.
    assert facts("My name is Dorin, I am 67 and retired. 38 years at sea as marine engineer, on container ships.") == [
        "The user's name is Dorin",
        "The user is 67 and retired, 38 years at sea as marine engineer, on container ships"]
    assert facts("WE GOT A GIG!!! club quattro on saturday the 12th of december. first proper venue ever") == [
        "WE GOT A GIG, club quattro on saturday the 12th of december, first proper venue ever"]
    assert facts("fyi im seriously allergic to shellfish, like carry-an-epipen allergic. shrimp crab all of that") == [
        "The user is seriously allergic to shellfish, like carry-an-epipen allergic, shrimp crab all of that"]
    # So does a sentence whose subject is what the one before told of: alone, "The best one is a blue hen called
    # Iskra" named no bird of theirs, and "which of my birds is the best racer?" found nothing.
    assert facts("I have 40 racing pigeons. The best one is a blue hen called Iskra, she won in Hannover") == [
        "The user have 40 racing pigeons, The best one is a blue hen called Iskra, she won in Hannover"]
    assert facts("I signed up for my first half marathon!! It's on the 17th of April. Pray for my knees") == [
        "The user signed up for the user's first half marathon, It's on the 17th of April", "Pray for the user's knees"]
    # Chat's "i", "ive" and "im"; a name before "and i"; a statement with a question mark; news without a verb.
    assert facts("ngl rough couple weeks. yui and i broke up, it was mutual") == [
        "Yui and the user broke up, it was mutual"]
    assert facts("tbh ive been hanging out with mika and we're kind of a thing now? she climbs") == [
        "The user has been hanging out with mika and we're kind of a thing now, she climbs"]
    assert facts("Finally!! First night in the new house in Wrocław.") == ["First night in the new house in Wrocław"]
    assert facts("Rooibos every morning now") == ["Rooibos every morning now"]
    assert facts("I should quit my job?") == [] and facts("Happy birthday to Mum") == []  # asked; a wish
    assert facts("honestly can't function without my 3 espressos") == [  # "can't" asks nothing
        "Can't function without the user's 3 espressos"]
    assert facts("I live in Denver. Lovely weather today.") == ["The user live in Denver"]
    assert facts("It is raining again. There was a fire drill. Kuba is seven") == ["Kuba is seven"]  # "It" names no one
    assert facts("Hello again my friend") == [] and facts("The weather is lovely. 38 years at sea as engineer.") == []


def test_a_statement_the_router_sent_to_act_is_answered_as_a_statement_but_requests_stay() -> None:
    from services.act.fastpath import only_tells

    assert only_tells({"has_time": 1.0, "reaction": 1.0, "topic_is_new": 1.0})
    assert not only_tells({"skill_continuation": 1.0})  # "at 9", answering the question ACT asked
    assert only_tells({"thanks": 1.0, "skill_continuation": 1.0})  # "Thanks, that's all for now"
    # News that holds a date, right after a list was filled ("Oh and my sister Funmi is getting married on the 14th
    # of June, I'm a bridesmaid!", 16 words) tells; a short time after a reminder ("tomorrow at 9 please") fills it.
    assert only_tells({"skill_continuation": 1.0, "has_time": 1.0, "word_count": 16.0})
    assert not only_tells({"skill_continuation": 1.0, "has_time": 1.0, "word_count": 4.0})
    assert not only_tells({"thanks": 1.0, "imperative": 1.0, "skill_list": 1.0})  # "Thanks, now add milk to …"
    assert not only_tells({"skill_list": 1.0})  # "I need to buy milk": a list may be meant
    assert not only_tells({"imperative": 1.0}) and not only_tells({"question": 1.0})


def _thread(turns: int) -> list[dict[str, object]]:
    """Working memory as the thread keeps it: its last ten turns, each with its number in the thread."""
    return [{"turn": n, "user": f"message {n}", "reply": f"reply {n}"} for n in range(1, turns + 1)][-10:]


def test_the_history_window_moves_in_steps_so_the_next_prompt_begins_like_this_one() -> None:
    """llama.cpp reuses the prompt read last up to the first differing token: a window sliding by one on every
    turn made it read the whole history again on every reply."""
    budgets = CompactBudgets(history_exchanges=6)
    shown = {n: [m["content"] for m in compact_messages("S", _thread(n), "", "next", budgets)[1:-1]]
             for n in range(1, 16)}
    assert shown[5][0] == "message 1" and len(shown[6]) == 12  # a young thread shows everything
    kept = [n for n in range(7, 15) if shown[n + 1][: len(shown[n])] == shown[n]]
    assert len(kept) >= 5  # at least two turns in three start the same way
    assert all(4 <= len(shown[n]) // 2 <= 6 for n in range(7, 16))  # never fewer than four of the last six
    assert all(shown[n][-2:] == [f"message {n}", f"reply {n}"] for n in range(1, 16))  # the newest always there


def test_a_window_moving_by_a_long_step_is_read_again_rarely_and_keeps_the_last_turns() -> None:
    """The profile's window (10 turns of the ten working memory holds, moving by 9): one prompt in nine reads
    the history again, and then only the turns left in the window."""
    budgets = CompactBudgets(history_exchanges=10, history_step=9, history_chars=6000)
    shown = {n: [m["content"] for m in compact_messages("S", _thread(n), "", "next", budgets)[1:-1]]
             for n in range(1, 30)}
    moved = [n for n in range(1, 29) if shown[n + 1][: len(shown[n])] != shown[n]]
    assert moved == [10, 19, 28]  # the prompts of turns 12, 21 and 30 begin differently from the one before
    assert all(len(shown[n + 1]) // 2 == 2 for n in moved)  # the turn before and the newest
    assert all(2 <= len(shown[n]) // 2 <= 10 for n in range(2, 30))
    assert all(shown[n][-2:] == [f"message {n}", f"reply {n}"] for n in range(1, 30))


def test_a_threads_prompt_only_grows_so_the_next_turn_begins_with_this_prompt_and_its_reply() -> None:
    """Each turn's note (recall's finds, a mode's instruction) stays before its message in later prompts: the
    server then finds the whole last prompt and the reply it wrote in its cache and reads only the new note and
    message. Without it the history dropped the note and everything after it was read again on every turn."""
    from services.llm.profile import turn_note

    budgets = CompactBudgets(history_exchanges=10, history_step=9, history_chars=6000)
    memory: list[dict[str, object]] = []
    previous: list[dict[str, str]] = []
    for n in range(1, 10):
        recalled = f"- you keep bees at the allotment {n}." if n % 2 else ""
        hint = "React in one short sentence." if n % 3 == 0 else ""
        messages = compact_messages("S", memory, recalled, f"message {n}", budgets, about_text="- you live in Leeds.",
                                    hint=hint)
        assert messages[: len(previous)] == previous, f"turn {n} does not begin with turn {n - 1}'s prompt and reply"
        assert turn_note(messages) == (messages[-2]["content"] if recalled or hint else "")
        reply = f"reply {n}"
        memory.append({"turn": n, "user": f"message {n}", "reply": reply,
                       **({"note": turn_note(messages)} if turn_note(messages) else {})})
        previous = [*messages, {"role": "assistant", "content": reply}]
    assert sum(m["role"] == "system" for m in previous) == 1 + 6  # the prompt and the notes of turns 1,3,5,6,7,9


def test_over_its_characters_the_window_moves_by_whole_steps() -> None:
    """A history longer than ``history_chars`` loses its oldest turns a step at a time, not one per turn (which
    would make every prompt differ from the last at its first turn)."""
    budgets = CompactBudgets(history_exchanges=10, history_step=4, history_chars=900)
    thread = [{"turn": n, "user": f"message {n} " + "x" * 140, "reply": f"reply {n}"} for n in range(1, 11)]
    shown = {n: [m["content"] for m in compact_messages("S", thread[:n], "", "next", budgets)[1:-1]]
             for n in range(1, 11)}
    assert all(sum(len(text) for text in shown[n]) <= 900 for n in shown)
    moved = [n for n in range(1, 10) if shown[n + 1][: len(shown[n])] != shown[n]]
    assert len(moved) <= 3 and all(shown[n][-1] == f"reply {n}" for n in shown)


def test_what_is_set_for_later_is_shown_to_messages_that_may_be_about_it() -> None:
    from services.memory.notes import about_plans

    pending = ["- reminder for Friday 4 December 2026 at 18:00: pick up Ana at the airport.",
               "- your hardware store list: sandpaper, wood glue."]
    for message in ("What do I need to get from the hardware store?", "Who was I supposed to ring tomorrow?",
                    "what's my reminder for the evening", "Did I set anything for Friday?", "Is the glue on it?",
                    "When does Ana land at the airport?", "What did I say I need for the hardware store?",
                    "what have i to bring along to the cabin?", "anything I should pack for the hike?"):
        assert about_plans(message, pending), message
    for message in ("Tell me a short joke", "Write a two-line poem about the sea", "How are you?",
                    "What is my dog's name?", "What can I make the kids for dinner tonight?",  # an idea, not a plan
                    "Fiona and I fancy a takeaway tonight, what should we get?", "How do I get to work these days?",
                    "When is my thesis defence?", "when's Sipho's birthday again?",  # a date told, not set
                    "Any ideas what to cook on Friday?"):  # a reminder's day is not one of its words
        assert not about_plans(message, pending), message


def test_facts_of_named_speakers_are_named_for_them_and_the_assistants_words_are_none() -> None:
    from services.memory.from_words import chunk_from_lines

    chunk = chunk_from_lines([("Caroline", "Hey Mel! I went to a support group yesterday, my mum came too."),
                              ("Melanie", "Wow! I'm painting a sunset. What did you think of it?"),
                              ("assistant", "I am an assistant and I love painting.")])
    assert [fact["text"] for fact in chunk["facts"]] == [
        "Caroline went to a support group yesterday, Caroline's mum came too", "Melanie is painting a sunset"]
    assert chunk["gists"][0].startswith("Caroline said: Hey Mel!") and chunk["gists"][1].startswith("Melanie said:")
    assert chunk_from_lines([("assistant", "I am here.")])["facts"] == []


def test_a_lone_name_after_a_fact_about_someone_unnamed_is_their_name() -> None:
    """"missus turns 50 on the 3rd of august. shaz.": without the name in the fact, "when's shaz's birthday?" found
    nothing; an interjection after a fact ("Wow.", "lol") is no name, nor a lone word after a fact about nobody."""
    from services.memory.from_words import chunk_from_words

    def facts(message: str) -> list[str]:
        return [fact["text"] for fact in chunk_from_words(message)["facts"]]
    assert facts("hubby turns 60 on the 9th of may. trev. thinking a party") == [
        "The user's hubby turns 60 on the 9th of may, trev"]  # a terse "my" left out is read (from_words.BARE_KIN)
    assert facts("my dog had pups today. Juno.") == ["The user's dog had pups today, Juno"]
    assert facts("my sister got married. Wow.") == ["The user's sister got married"]
    assert facts("I passed my driving test. Finally.") == ["The user passed the user's driving test"]
