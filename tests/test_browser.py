"""The pages in a real browser: headless Debian Chromium against `engram run` with the scripted LLM.

One system (with API tokens configured, so every page must send its token) is started for the
module; the browser reaches it through a proxy that can cut connections mid-reply. Every test
leaves a screenshot in test-output/browser/.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from services.db import User, insert, sqlalchemy_url
from services.memory.models import Fact
from services.queues import owner_meta
from services.streams import EventLog, user_channel
from tests.browser import (
    MARKDOWN_CASES,
    chromium,
    chromium_path,
    last_reply,
    new_conversation,
    send,
    wait_reply_done,
)
from tests.fake_llm import FakeLLM
from tests.llm_steps import Json, Reply, ToolCalls
from tests.relay import TcpRelay
from tests.system import System, running_system
from tests.test_e2e import CHUNK, EPISODE

pytestmark = [
    pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow,
    pytest.mark.skipif(chromium_path() is None, reason="Chromium is not installed (.ci/run installs it)"),
]

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "test-output" / "browser"
TOKEN = "browser-token-1234"
USER = "alice"
WAIT_MS = 30_000


@pytest.fixture(autouse=True)
def background_llm_routes(llm: FakeLLM) -> None:
    """Memory workers and the router's tie-breaker get their own answers, never a chat's scripted reply."""
    llm.reset()
    llm.route("MEMORY CHUNK", Json(CHUNK))
    llm.route("EPISODE", Json(EPISODE))
    llm.route("Two modes scored almost equally", Reply("RESPOND"))


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM) -> Iterator[System]:
    data_dir = tmp_path_factory.mktemp("engram-browser")
    with running_system(data_dir, OPENAI_BASE_URL=llm.url, ENGRAM_LOCAL_LLM="false",
                        ENGRAM_API_TOKENS=f"{TOKEN}:{USER}") as engram:
        yield engram


@pytest.fixture(scope="module")
def proxy(system: System) -> Iterator[TcpRelay]:
    port = int(system.base_url.rsplit(":", 1)[1])
    cuttable = TcpRelay(port)
    yield cuttable
    cuttable.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


def new_page(browser, proxy: TcpRelay, *, token: str | None = TOKEN, phone: bool = False):  # type: ignore[no-untyped-def]
    viewport = {"width": 390, "height": 844} if phone else {"width": 1280, "height": 860}
    # bypass_csp: the pages' policy forbids eval, which Playwright's wait_for_function uses; what
    # keeps a reply's HTML inert is the page's escaping, asserted with the policy out of the way.
    context = browser.new_context(base_url=proxy.url, viewport=viewport, device_scale_factor=1,
                                  color_scheme="light", is_mobile=phone, has_touch=phone, bypass_csp=True)
    if token:
        context.add_init_script(f"localStorage.setItem('engram.token', {token!r});")
    context.set_default_timeout(WAIT_MS)
    return context.new_page()


@pytest.fixture
def page(browser, proxy: TcpRelay, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A fresh browser context holding the token; screenshot saved after the test, pass or fail."""
    opened = new_page(browser, proxy)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    SHOTS.mkdir(parents=True, exist_ok=True)
    opened.screenshot(path=str(SHOTS / f"{request.node.name}.png"), full_page=True)
    opened.context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def api(system: System, method: str, path: str, **kwargs) -> httpx.Response:  # type: ignore[no-untyped-def]
    return httpx.request(method, system.base_url + path, headers={"Authorization": f"Bearer {TOKEN}"},
                         timeout=30, **kwargs)


def test_send_a_message_and_see_the_streamed_reply(page, llm: FakeLLM) -> None:
    reply = "Hello! Here is a **bold** idea and some `code`, streamed in small pieces for you to watch."
    llm.script(Reply(reply, chunk_size=3, per_chunk_delay_s=0.06))
    new_conversation(page)
    send(page, "Please tell me a short greeting with an idea.")
    page.wait_for_selector(".bubble.engram.streaming")
    page.wait_for_function("document.querySelector('#status').textContent.includes('mode')")
    status = page.inner_text("#status")
    assert re.search(r"mode (RESPOND|ACT|CLARIFY|ACKNOWLEDGE)", status) and "topic" in status
    partial = last_reply(page).inner_text()
    assert partial != reply.replace("**", "").replace("`", "")  # seen while it was still streaming
    shown = "Hello! Here is a bold idea and some code, streamed in small pieces for you to watch."
    assert wait_reply_done(page) == shown
    assert last_reply(page).locator("strong").inner_text() == "bold"
    assert last_reply(page).locator("code").inner_text() == "code"
    assert page.locator("#log .turn:last-child .meta .mode").inner_text() in {"RESPOND", "ACT", "CLARIFY",
                                                                              "ACKNOWLEDGE"}
    assert page.locator("#log .bubble.you").last.inner_text() == "Please tell me a short greeting with an idea."
    assert page.inner_text("#status") == ""


def test_reload_shows_the_conversation_and_lists_it(page, llm: FakeLLM) -> None:
    llm.script(Reply("Tomatoes like sun and regular water."), Reply("Basil grows well next to them."))
    new_conversation(page)
    send(page, "How do I grow tomatoes on a balcony?")
    wait_reply_done(page)
    send(page, "What should I plant next to them?")
    assert wait_reply_done(page) == "Basil grows well next to them."
    page.reload()
    page.wait_for_selector("#log .turn .bubble.engram")
    assert page.locator("#log .bubble.you").all_inner_texts() == [
        "How do I grow tomatoes on a balcony?", "What should I plant next to them?"]
    assert page.locator("#log .bubble.engram").all_inner_texts() == [
        "Tomatoes like sun and regular water.", "Basil grows well next to them."]
    current = page.locator("#thread-list button[aria-current=true]")
    assert "How do I grow tomatoes on a balcony?" in current.inner_text() and "2 messages" in current.inner_text()
    # Another conversation, then back to this one from the list.
    page.click("#new-thread")
    page.wait_for_selector("#log .empty")
    page.locator("#thread-list button", has_text="tomatoes").click()
    page.wait_for_selector("#log .bubble.engram")
    assert page.locator("#log .bubble.engram").count() == 2


def test_a_connection_cut_mid_reply_completes_once(page, llm: FakeLLM, proxy: TcpRelay) -> None:
    words = [f"word{n:02d}" for n in range(40)]
    reply = "Counting slowly: " + " ".join(words) + "."
    llm.script(Reply(reply, chunk_size=4, per_chunk_delay_s=0.1))
    new_conversation(page)
    send(page, "Please count slowly for me from zero to thirty-nine.")
    page.wait_for_function(
        "document.querySelector('#log .turn:last-child .bubble.engram').textContent.includes('word03')")
    before = last_reply(page).inner_text()
    assert "word39" not in before
    assert proxy.cut() > 0
    page.wait_for_function("document.querySelector('#status').textContent.includes('reconnecting')", timeout=10_000)
    assert wait_reply_done(page) == reply
    assert last_reply(page).inner_text().count("word05") == 1
    assert page.locator("#log .bubble.engram").count() == 1
    resumed = proxy.heads_matching("/events HTTP")
    assert any("/chat/" in head and "last-event-id:" in head.lower() for head in resumed), resumed


def test_a_pushed_reminder_shows_and_a_missed_one_is_replayed(page, system: System, proxy: TcpRelay) -> None:
    events = EventLog(redis.Redis.from_url(system.urls()[0]))
    page.goto("/")
    page.wait_for_selector("#conn.live")
    events.publish(user_channel(USER), "reminder", {"id": 101, "text": "Water the tomatoes", "kind": "reminder",
                                                     "due_at": "2026-11-23T18:00:00+00:00", "reply": None})
    card = page.locator(".event-card.reminder", has_text="Water the tomatoes")
    card.wait_for()
    assert "reminder" in card.inner_text().lower()
    assert page.locator("#updates li", has_text="Water the tomatoes").count() == 1
    # Dropped while something is sent: the page reconnects with Last-Event-ID and shows it once.
    proxy.cut()
    events.publish(user_channel(USER), "thought", {"id": 7, "text": "Basil and tomatoes share a bed well.",
                                                    "topic": "gardening"})
    page.locator(".event-card.thought", has_text="Basil and tomatoes").wait_for()
    events.publish(user_channel(USER), "goal", {"goal_id": 3, "title": "Balcony garden", "text": "Seeds ordered.",
                                                 "status": "active"})
    page.locator(".event-card.goal", has_text="Seeds ordered.").wait_for()
    time.sleep(1.0)
    assert page.locator(".event-card", has_text="Water the tomatoes").count() == 1
    assert page.locator(".event-card", has_text="Basil and tomatoes").count() == 1
    assert any("last-event-id:" in head.lower() for head in proxy.heads_matching("GET /events"))


def test_an_action_is_confirmed_by_clicking_yes(page, llm: FakeLLM, system: System) -> None:
    # Forgetting always asks first: the question names what would go, and "Yes" carries it out.
    fact_id = _insert_fact(system, "The user's old address is 12 Elm Street.")
    llm.script(ToolCalls([("forget", {"query": "old address"})]),
               Reply("Done: I have forgotten your old address."))
    new_conversation(page)
    send(page, "Please forget my old address")
    question = wait_reply_done(page)
    assert question.startswith("Before I do that, please confirm") and "12 Elm Street" in question
    buttons = page.locator("#log .turn:last-child .confirm button")
    assert buttons.all_inner_texts() == ["Yes", "No"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "chat_confirmation.png"))
    page.click("#log .turn:last-child .confirm button[data-answer=yes]")
    page.wait_for_function("document.querySelectorAll('#log .turn').length === 2")
    assert wait_reply_done(page) == "Done: I have forgotten your old address."
    assert page.locator("#log .bubble.you").last.inner_text() == "yes"
    assert page.locator("#log .confirm").count() == 0
    assert "forget" in page.locator("#log .turn:last-child .meta").inner_text()
    thread_id = page.evaluate("localStorage.getItem('engram.thread')")
    exchanges = api(system, "GET", f"/threads/{thread_id}/exchanges").json()["exchanges"]
    assert exchanges[-1]["tools"] == ["forget"] and exchanges[0]["confirm"]["skill"] == "forget"
    assert api(system, "GET", f"/memory/facts/{fact_id}").status_code == 404


def _insert_fact(system: System, fact_text: str) -> int:
    engine = create_engine(sqlalchemy_url(system.urls()[1]))
    try:
        with Session(engine) as session, session.begin():
            session.execute(insert(User).values(id=USER).on_conflict_do_nothing())
            fact = Fact(user_id=USER, text=fact_text, confidence=0.9, salience=0.8)
            session.add(fact)
            session.flush()
            return int(fact.id)
    finally:
        engine.dispose()


def test_edit_a_fact_see_its_history_and_delete_it(page, system: System) -> None:
    fact_id = _insert_fact(system, "The user's bike is red.")
    page.goto(f"/memory#fact-{fact_id}")
    card = page.locator(f"#fact-{fact_id}")
    card.wait_for()
    assert "highlight" in card.get_attribute("class")
    card.locator("button.edit").click()
    card.locator("textarea").fill("The user's bike is blue.")
    card.locator("button[type=submit]").click()
    corrected = page.locator(".card", has_text="The user's bike is blue.")
    corrected.wait_for()
    new_id = int(corrected.get_attribute("data-id"))
    assert new_id != fact_id
    corrected.locator("button.show-history").click()
    history = corrected.locator(".history li")
    history.first.wait_for()
    assert history.all_inner_texts()[0].startswith("The user's bike is red.")
    assert "old" in history.first.get_attribute("class")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "memory_with_fact_history.png"), full_page=True)
    assert api(system, "GET", f"/memory/facts/{fact_id}").json()["superseded_by"] == new_id
    corrected.locator("button.delete").click()
    page.locator("dialog.ask button.danger").click()
    corrected.wait_for(state="detached")
    assert api(system, "GET", f"/memory/facts/{new_id}").status_code == 404
    page.fill("#q", "bike")
    page.press("#q", "Enter")
    page.wait_for_function("document.querySelector('#summary').textContent.includes('Nothing matches')")


def test_the_ops_page_shows_live_numbers_and_retries_a_failed_job(page, llm: FakeLLM, system: System) -> None:
    llm.script(Reply("Tides come from the moon's pull."))
    with httpx.stream("POST", system.base_url + "/chat", json={"text": "Explain how tides work."},
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as response:
        for _ in response.iter_lines():
            pass
    from rq import Queue

    broken = Queue("background-queue", connection=redis.Redis.from_url(system.urls()[0])).enqueue(
        "json.loads", "this is not json", job_id="browser-broken-job", meta=owner_meta(USER))  # the user's own job
    page.goto("/ops")
    page.wait_for_selector("#health-status .ok")
    page.wait_for_selector("#modes td")
    modes = page.locator("#modes tbody tr").all_inner_texts()
    assert any(re.search(r"\b[1-9]\d*\b", row) for row in modes)
    latency = page.locator("#latency tbody").inner_text()
    for stage in ("routing", "classification", "first token", "reply"):
        assert stage in latency
    assert re.search(r"\d+(\.\d+)? (ms|s)", latency)
    assert "prompt-queue" in page.inner_text("#queues")
    assert page.locator("#workers tbody tr").count() >= 1
    assert page.locator("#routing tbody tr").count() >= 1
    assert page.locator("#tokens tbody tr").count() >= 1
    assert int(page.locator("#activity .big").first.inner_text()) >= 1
    retry = page.locator("#failed button[data-job=browser-broken-job]")
    # The background worker fails it after whatever it was busy with (in three full-suite runs on loaded cores that
    # took over 60 s; alone, seconds): wait for the worker first, then for the page, which refreshes by itself.
    deadline = time.monotonic() + 300
    while broken.get_status(refresh=True) != "failed" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert broken.get_status(refresh=True) == "failed"
    retry.wait_for(timeout=30_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "ops_overview.png"), full_page=True)
    retry.click()
    page.locator(".toast", has_text="back on background-queue").wait_for()
    # The periodic services with their schedules (the shipped reminders service runs every minute).
    page.locator("#services td", has_text="every 60s").first.wait_for()
    assert page.locator("#services-panel").is_visible() and "reminders" in page.inner_text("#services")


def test_a_reply_with_script_tags_stays_text(page, llm: FakeLLM) -> None:
    nasty = ('Look: <script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2"> '
             '[x](javascript:alert(1)) end')
    llm.script(Reply(nasty))
    new_conversation(page)
    send(page, "Show me some HTML tags as text.")
    shown = wait_reply_done(page)
    assert "<script>window.pwned = 1</script>" in shown and "<img src=x" in shown
    bubble = last_reply(page)
    assert bubble.locator("script, img, a").count() == 0
    page.reload()
    page.wait_for_selector("#log .bubble.engram")
    assert "<script>window.pwned = 1</script>" in last_reply(page).inner_text()
    assert page.evaluate("window.pwned") is None


def test_pages_ask_for_the_token_and_work_with_it(browser, proxy: TcpRelay) -> None:
    page = new_page(browser, proxy, token=None)
    try:
        page.goto("/")
        dialog = page.locator("dialog.token")
        dialog.wait_for()
        page.fill("#token-input", TOKEN)
        page.click("dialog.token button[type=submit]")
        page.wait_for_selector("#thread-list li")
        page.wait_for_selector("#conn.live")
        assert page.evaluate("localStorage.getItem('engram.token')") == TOKEN
        page.goto("/memory")
        page.wait_for_function("document.querySelector('#summary').textContent !== ''")
        assert "token" not in page.inner_text("#summary")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "test_pages_ask_for_the_token_and_work_with_it.png"), full_page=True)
    finally:
        page.context.close()


def test_the_chat_page_fits_a_phone(browser, proxy: TcpRelay, llm: FakeLLM) -> None:
    llm.script(Reply("Short answers read well on a phone, even with a long word like supercalifragilistic."))
    page = new_page(browser, proxy, phone=True)
    try:
        page.goto("/")
        page.click("#threads-toggle")
        page.click("#new-thread")
        page.wait_for_selector("#log .empty")
        send(page, "Does this page work on my phone?")
        wait_reply_done(page)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert page.locator("#thread-list").is_hidden()  # the list is a drawer on a narrow screen
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "test_the_chat_page_fits_a_phone.png"))
    finally:
        page.context.close()


def test_a_reload_mid_reply_picks_the_reply_up_again(page, llm: FakeLLM) -> None:
    words = " ".join(f"step{n:02d}" for n in range(30))
    llm.script(Reply("Slowly: " + words + ".", chunk_size=4, per_chunk_delay_s=0.12))
    new_conversation(page)
    send(page, "Walk me slowly through thirty steps.")
    page.wait_for_function(
        "document.querySelector('#log .turn:last-child .bubble.engram').textContent.includes('step02')")
    page.reload()
    assert wait_reply_done(page) == "Slowly: " + words + "."
    assert page.locator("#log .bubble.engram").count() == 1
    assert page.locator("#log .bubble.you").all_inner_texts() == ["Walk me slowly through thirty steps."]
    page.reload()  # stored now: shown from the thread, not resumed a second time
    page.wait_for_selector("#log .bubble.engram")
    assert page.locator("#log .bubble.engram").all_inner_texts() == ["Slowly: " + words + "."]


def test_the_markdown_renderer_escapes_before_formatting(page) -> None:
    page.goto("/")
    page.wait_for_function("typeof Engram !== 'undefined'")
    for source, expected in MARKDOWN_CASES:
        assert page.evaluate("(text) => Engram.markdown(text)", source) == expected, source


def test_export_then_forget_everything_after_typing_the_word(page, system: System) -> None:
    # Last in the module: it empties alice's memory.
    _insert_fact(system, "The user's favourite colour is green.")
    page.goto("/memory")
    page.locator(".card", has_text="favourite colour is green").wait_for()
    with page.expect_download() as download:
        page.click("#export")
    bundle = Path(download.value.path()).read_text()
    assert '"user_id": "alice"' in bundle.replace('":"', '": "') and "favourite colour is green" in bundle
    page.click("#forget-all")
    confirm = page.locator("dialog.ask button.danger")
    assert confirm.is_disabled()
    page.locator("dialog.ask input").fill("forge")
    assert confirm.is_disabled()
    page.locator("dialog.ask input").fill("forget")
    confirm.click()
    # The purge no longer waits for a vector backfill batch in the model (it took 36 s at load 8 when the batch held
    # its rows; the backfill's claim is an advisory lock now): quiet it takes under 3 s, 30 s is the margin.
    page.wait_for_function("document.querySelector('#summary').textContent.includes('Nothing remembered')",
                           timeout=30_000)
    assert api(system, "GET", "/memory/facts").json()["facts"] == []
    assert api(system, "GET", "/threads").json()["total"] == 0
