"""The chat page of ``local-rag serve`` (``GET /``, `local_rag.server.page`): served with a strict policy and nothing
from elsewhere, and used for real in headless Chromium (Debian's ``chromium``, driven by Playwright) against the real
uvicorn server over a real tiny index: a scripted LLM for the page's logic, the real SmolLM2 on llama.cpp through the
``serve`` command. Without Chromium or Playwright the browser tests skip with the way to install them (the CI
installs both)."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local_rag.server.page import FILES, OFF, POLICY

from .test_decide import stack as stack  # noqa: PLC0414 - a real trained decider, used here too
from .test_server import ANSWER, CONV, SlowLLM, app_for, bm25_only, httpx, running, serve_command
from .test_server import index as index  # noqa: PLC0414 - the module's fixture, used here too

PAGE = Path(__file__).resolve().parents[1] / "local_rag" / "server" / "page"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def test_the_page_is_served_with_a_strict_policy_and_nothing_from_elsewhere(index):
    with running(app_for(index, SlowLLM())) as url:
        page = httpx.get(f"{url}/")
        script = httpx.get(f"{url}/ui/chat.js")
        style = httpx.get(f"{url}/ui/chat.css")
        missing = httpx.get(f"{url}/ui/secret.txt")
        traversal = httpx.get(f"{url}/ui/..%2F__init__.py")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == POLICY and page.headers["x-content-type-options"] == "nosniff"
    assert '<script src="/ui/chat.js">' in page.text and 'href="/ui/chat.css"' in page.text
    assert script.headers["content-type"].startswith("text/javascript") and "readStream" in script.text
    assert style.headers["content-type"].startswith("text/css")
    assert missing.status_code == 404 and "chat.css, chat.js, index.html" in missing.json()["error"]["message"]
    assert traversal.status_code == 404
    for name in FILES:  # an air-gapped machine: no address outside the server, no inline script or style to allow
        text = (PAGE / name).read_text(encoding="utf-8")
        assert not re.search(r"(?<![\w/])(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), name
        assert "<script>" not in text and " style=" not in text and "onclick" not in text, name
    assert sorted(p.name for p in PAGE.iterdir()) == sorted(FILES)


def test_the_page_can_be_left_out_and_a_key_guards_what_it_asks(index):
    with running(app_for(index, SlowLLM(), ui=False)) as url:
        off = httpx.get(f"{url}/")
        assert off.status_code == 404 and off.json()["error"]["message"] == OFF
        assert httpx.get(f"{url}/ui/chat.js").status_code == 404
        assert httpx.post(f"{url}/v1/chat/completions", json={"messages": CONV}).status_code == 200
    with running(app_for(index, SlowLLM(), api_key="s3cret")) as url:
        assert httpx.get(f"{url}/").status_code == 200  # the page is static: it asks for the key itself
        assert httpx.get(f"{url}/v1/models").status_code == 401


def test_the_servers_own_page_may_call_it_from_the_lan_when_it_has_a_key(index):
    """A server on 0.0.0.0 with a key, its page opened as http://192.168.1.5:8000/: the page's requests carry that
    origin, which is not a page of this machine; they are the server's own, so they are let through (the key still
    needed). Without a key (loopback only) another host's name is refused as before: DNS rebinding."""
    def post(url: str, key: str = "") -> Any:
        host = "192.168.1.5:8000"
        return httpx.post(f"{url}/v1/chat/completions", json={"messages": CONV},
                          headers={"Origin": f"http://{host}", "Host": host,
                                   **({"Authorization": f"Bearer {key}"} if key else {})})

    with running(app_for(index, SlowLLM(), api_key="s3cret")) as url:
        assert post(url, "s3cret").status_code == 200
        assert post(url).status_code == 401
        other = httpx.post(f"{url}/v1/chat/completions", json={"messages": CONV},
                           headers={"Origin": "http://evil.example", "Authorization": "Bearer s3cret"})
        assert other.status_code == 403
    with running(app_for(index, SlowLLM())) as url:
        assert post(url).status_code == 403


def test_sources_ride_in_the_response_as_the_page_shows_them(index):
    with running(app_for(index, SlowLLM())) as url:
        body = httpx.post(f"{url}/v1/chat/completions", json={"messages": CONV}, timeout=30).json()
    sources = body["local_rag"]["sources"]
    assert sources["heading"] == "" and sources["lines"][0]["numbers"] == [1]
    first = sources["lines"][0]["passages"][0]
    assert first["passage_id"] == "d1-1" and "twelve to sixteen hours" in first["text"]
    assert sources["lines"][0]["label"].startswith("Cats")


# ------------------------------------------------------------------ in the browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra has it)")
    executable = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    if executable is None:
        pytest.skip("no Chromium: apt-get install chromium (Debian; the CI installs it)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(accept_downloads=True)
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" and "401" not in msg.text else None)
    opened.errors = errors
    try:
        yield opened
    finally:
        context.close()


def ask(page: Any, question: str) -> None:
    page.fill("#question", question)
    page.press("#question", "Enter")


def answered(page: Any, n: int) -> Any:
    """The n-th answer (1-based), once its turn is over (the Send button enabled again)."""
    page.wait_for_selector(f".turn.assistant >> nth={n - 1}")  # selectors, not wait_for_function: the page's own
    page.wait_for_selector("#send:enabled")  # policy forbids the eval that would need (the test keeps it enforced)
    return page.locator(".turn.assistant").nth(n - 1)


def stored(page: Any) -> list[dict[str, Any]]:
    """The turns of the conversation the tab shows, as the page keeps them in the browser."""
    return json.loads(page.evaluate("JSON.stringify(JSON.parse(localStorage.getItem('local-rag.chats')).find("
                                    "c => c.id === sessionStorage.getItem('local-rag.current')).turns)"))


def test_a_conversation_in_the_browser_with_sources_history_and_a_saved_copy(index, page, tmp_path):
    llm = SlowLLM(delay=0.01)
    with running(app_for(index, llm)) as url:
        page.goto(url)
        page.wait_for_selector("#about:has-text('index')")
        assert page.locator("#model option").all_text_contents() == ["smollm2-135m-instruct"]
        ask(page, "how long do cats sleep?")
        first = answered(page, 1)
        assert first.locator(".text").inner_text().strip() == ANSWER
        assert first.locator("a.cite").all_text_contents() == ["[1]"]
        source = first.locator(".sources details").first
        assert source.locator("summary").inner_text().startswith("[1] Cats") and not source.evaluate("d => d.open")
        first.locator("a.cite").click()  # the citation opens its passage
        assert source.evaluate("d => d.open") and "twelve to sixteen hours" in source.locator("blockquote").inner_text()
        assert "passages read" in first.locator(".meta").inner_text()
        assert not first.locator("button.whole").count()  # an index of records: no file to read whole

        llm.reply = lambda m, s: "Dogs bark and fetch sticks [2]."
        ask(page, "and dogs?")
        second = answered(page, 2)
        assert "Dogs bark" in second.inner_text()
        prompt = "\n".join(m["content"] for m in llm.seen[-1])
        assert ANSWER.rstrip(".") in prompt and "how long do cats sleep?" in prompt and "and dogs?" in prompt

        page.reload()  # the conversation stays with the tab
        assert page.locator(".turn.assistant").count() == 2 and page.locator(".turn.user").first.inner_text() == "how long do cats sleep?"
        with page.expect_download() as download:
            page.click("#save")
        saved = tmp_path / "chat.md"
        download.value.save_as(saved)
        text = saved.read_text(encoding="utf-8")
        assert "**You:** how long do cats sleep?" in text and f"**local-rag:** {ANSWER}" in text and "- [1] Cats" in text

        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        page.locator(".turn.assistant").first.locator("button.copy").click()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == f"{ANSWER}\n\nSources:\n[1] Cats (d1-1)"

        page.click("#new")
        assert page.locator(".turn").count() == 0
        page.reload()
        assert page.locator(".turn").count() == 0
        other = page.context.new_page()  # another tab: a new conversation, the first one in the history
        other.goto(url)
        assert other.locator(".turn").count() == 0
        assert other.locator("#history option").all_text_contents()[1].startswith("how long do cats sleep? · ")
        other.select_option("#history", index=1)
        assert other.locator(".turn.assistant").count() == 2
        other.click("#delete")
        assert other.locator(".turn").count() == 0 and other.locator("#history option").count() == 1
        other.close()

        page.focus("#only")  # the index's documents offered (the vector store files API), and the turn kept to one
        page.wait_for_selector("#documents option[value='d5']", state="attached")
        assert page.locator("#documents option").count() == 5
        page.fill("#only", "d2")
        ask(page, "how long do cats sleep?")
        answered(page, 1)
        assert {p["doc_id"] for p in stored(page)[1]["extra"]["passages"]} == {"d2"}
    assert page.errors == []


def test_a_question_back_and_a_decline_are_marked(index, page):
    with running(app_for(index, SlowLLM("CLARIFY: Do you mean house cats or big cats?"))) as url:
        page.goto(url)
        ask(page, "how long do they sleep?")
        turn = answered(page, 1)
        assert turn.locator(".kind").inner_text() == "a question back"
        assert turn.locator(".text").inner_text().strip() == "Do you mean house cats or big cats?"
        assert turn.locator(".sources").count() == 0
    settings, _ = index
    with running(app_for(index, SlowLLM(settings.generate.idk_answer))) as url:
        page.goto(url)
        page.click("#new")
        ask(page, "what is the capital of Peru?")
        turn = answered(page, 1)
        assert turn.locator(".kind").inner_text() == "not in the documents"
        assert turn.locator(".text").inner_text().strip() == settings.generate.idk_answer
    assert page.errors == []


def test_a_question_back_offers_the_options_and_one_click_answers_it(stack, page):
    """A real decider (logistic regression trained in the test, `tests/test_decide.py`) asks which animal is meant;
    the page shows the options the passages name, and clicking one asks the question again about it."""
    llm = SlowLLM("Cats sleep twelve to sixteen hours a day [1].")
    with running(app_for(stack, llm)) as url:
        page.goto(url)
        ask(page, "How long does this animal sleep?")
        turn = answered(page, 1)
        assert turn.locator(".kind").inner_text() == "a question back" and not llm.seen  # no model call
        assert "Cats" in turn.locator("button.option").all_text_contents()
        turn.locator("button.option", has_text="Cats").click()
        page.wait_for_selector(".turn.assistant >> nth=1")
        second = answered(page, 2)
        assert page.locator(".turn.user").nth(1).inner_text() == "Cats"
        assert second.locator(".text").inner_text().strip() == "Cats sleep twelve to sixteen hours a day [1]."
        assert "How long does this animal sleep? (Cats)" in llm.seen[-1][-1]["content"]  # the reply resolved it
    assert page.errors == []


def test_stop_ends_the_answer_and_frees_the_server(index, page):
    llm = SlowLLM(" ".join(f"word{i}" for i in range(400)), delay=0.03)  # 12 s if it ran to the end
    with running(app_for(index, llm, queue=0)) as url:
        page.goto(url)
        ask(page, "how long do cats sleep?")
        page.wait_for_selector(".turn.assistant .text:has-text('word5')")
        page.press("#question", "Escape")
        turn = answered(page, 1)
        assert turn.locator(".error").inner_text() == "Stopped." and "word5" in turn.inner_text()
        deadline = time.time() + 5
        while (turns := httpx.get(f"{url}/healthz").json()["turns"])["busy"] and time.time() < deadline:
            time.sleep(0.05)
        assert turns["busy"] is False and turns["cancelled"] == 1 and llm.emitted < 300
        llm.reply = lambda m, s: ANSWER
        turn.locator("button.retry").click()  # the stopped turn asked again, in its place
        page.wait_for_selector("#send:enabled")
        assert page.locator(".turn.assistant").count() == 1 and page.locator(".turn.user").count() == 1
        assert answered(page, 1).locator(".text").inner_text().strip() == ANSWER
        assert not page.locator("button.retry").count()
        ask(page, "and how long do dogs sleep?")
        answered(page, 2)
        prompt = "\n".join(m["content"] for m in llm.seen[-1])
        assert "word5" not in prompt and prompt.count("how long do cats sleep?") == 1


def test_the_page_asks_for_the_key_and_says_what_went_wrong(index, page):
    with running(app_for(index, SlowLLM(), api_key="s3cret")) as url:
        page.goto(url)
        page.wait_for_selector("#key:not([hidden])")
        page.fill("#key-input", "wrong")
        page.press("#key-input", "Enter")
        page.wait_for_selector("#key-note:has-text('refused')")
        page.fill("#key-input", "s3cret")
        page.press("#key-input", "Enter")
        page.wait_for_selector("#key", state="hidden")
        ask(page, "how long do cats sleep?")
        assert answered(page, 1).locator(".text").inner_text().strip() == ANSWER
        page.fill("#only", "nothing-like-this.pdf")  # a pattern matching no document: the server's one line
        ask(page, "how long do cats sleep?")
        error = answered(page, 2).locator(".error").inner_text()
        assert "nothing-like-this.pdf" in error and "matches no document" in error
    page.errors.clear()
    ask(page, "is anyone there?")  # the server has gone
    assert "does not answer" in answered(page, 3).locator(".error").inner_text()


def test_the_serve_command_answers_in_the_browser_with_the_real_smollm2(tmp_path: Path, page):
    """The real path: `local-rag serve` with SmolLM2-135M on llama.cpp, its chat page in Chromium."""
    from .llm_fixtures import SMOLLM, llama_cpp_or_skip, model_or_skip

    llama_cpp_or_skip()
    model_or_skip(SMOLLM)
    _, config = bm25_only(tmp_path, generate={"max_tokens": 48}, llm={"n_ctx": 2048})
    with serve_command(config) as url:
        page.goto(url)
        ask(page, "How many hours a day does a cat sleep?")
        page.set_default_timeout(180_000)  # a hang guard, not a speed check: a real model on a busy 2-core CPU
        turn = answered(page, 1)
        reply = httpx.get(f"{url}/healthz").json()
    assert turn.locator(".text").inner_text().strip() and not turn.locator(".error").count()
    assert reply["turns"]["served"] == 1 and "passages read" in turn.locator(".meta").inner_text()
    assert stored(page)[1]["extra"]["passages"][0]["passage_id"] == "d1-1"


def test_a_source_opens_its_document_whole_and_the_rewrite_is_shown(tmp_path: Path, page):
    """A folder index: a source's "Read the whole document" shows the file as read again (the vector store files
    API), the cited passage marked; the meta line says what the turn searched for when the rewrite changed it."""
    from local_rag.index.sync import sync_index
    from local_rag.pipeline import Pipeline
    from local_rag.server import create_app

    from .test_sync import rivers_index

    settings, folder = rivers_index(tmp_path)
    (folder / "alps.md").write_text("# Alps\n\nA moraine is debris a glacier left behind in the valley.\n\n"
                                    "## Huts\n\nBook the huts early in summer.\n")
    sync_index(settings, folder, progress=False)

    def reply(messages: Any, schema: Any) -> str:
        if "query" in (schema or {}).get("properties", {}):
            return '{"query": "What is a moraine in the Alps?"}'
        return "A moraine is debris a glacier left behind [1]."

    app = create_app(settings, Pipeline(settings, llm=SlowLLM(reply)), load=False)
    with running(app) as url:
        page.goto(url)
        ask(page, "what did the river gauge read?")
        answered(page, 1)
        ask(page, "and what is that thing a glacier leaves?")
        turn = answered(page, 2)
        assert "searched for “What is a moraine in the Alps?”" in turn.locator(".meta").inner_text()
        source = turn.locator(".sources details").first
        assert "alps.md" in source.locator("summary").inner_text()
        source.locator("summary").click()
        source.locator("button.whole").click()
        page.wait_for_selector("#reader-text mark")
        assert "Book the huts early in summer." in page.locator("#reader-text").inner_text()
        assert "moraine is debris" in page.locator("#reader-text mark").first.inner_text()
        assert "alps.md" in page.locator("#reader-title").inner_text()
        page.click("#reader-close")
        assert not page.locator("#reader").is_visible()
    assert page.errors == []
