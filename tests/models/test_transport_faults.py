"""Transport faults over real sockets: a refused connection, a server that hangs, a server that says how to retry.

Every wait goes through the fake `sleep`, which counts against the retry budget as a real wait would.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from plait.errors import ModelError
from plait.messages import ModelRequest
from plait.models import AnthropicModel, OpenAIModel, make_model
from plait.models._provider import local_url
from plait.settings import Settings
from wire_server import WireServer

if TYPE_CHECKING:
    from conftest import FakeSleep, Retries

MakeModel = Callable[..., OpenAIModel]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def silent() -> Iterator[str]:
    """A server that accepts connections and never answers: the kernel completes the handshake, nobody reads."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_refused_local_connection_fails_at_once(
    openai_model: MakeModel, hello: ModelRequest, sleep: FakeSleep, host: str
) -> None:
    url = f"http://{host}:{_closed_port()}/v1"
    with pytest.raises(ModelError, match=f"^openai:gpt-test: nothing is listening at {url}: is the server running\\?$"):
        asyncio.run(openai_model(base_url=url, max_retries=6).complete(hello))
    assert sleep.waits == []


def test_refused_local_connection_anthropic(
    anthropic_model: Callable[..., AnthropicModel], hello: ModelRequest, sleep: FakeSleep
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(ModelError, match=f"nothing is listening at {url}: is the server running\\?$"):
        asyncio.run(anthropic_model(base_url=url).complete(hello))
    assert sleep.waits == []


def test_a_hang_stops_within_the_retry_budget(
    openai_model: MakeModel, hello: ModelRequest, sleep: FakeSleep, silent: str
) -> None:
    # The first wait (at least half a second) would take the call past its budget.
    model = openai_model(base_url=silent, timeout=0.2, max_retries=6, retry_budget=0.5)
    with pytest.raises(ModelError) as caught:
        asyncio.run(model.complete(hello))
    message = str(caught.value)
    assert message.startswith(f"openai:gpt-test failed: no reply from {silent} within 0.2s; gave up after 1 try in ")
    assert message.endswith("(retry_budget is 0.5 s)")
    assert "\n" not in message
    assert sleep.waits == []


def test_a_retry_that_hangs_is_cut_at_the_budget(
    openai_model: MakeModel, hello: ModelRequest, sleep: FakeSleep, retries: Retries
) -> None:
    release = threading.Event()

    def then_hang(fmt: str, body: dict[str, Any]) -> dict[str, Any]:
        release.wait(10)
        return {"text": "too late"}

    with WireServer(then_hang) as server:
        server.push({"status": 500, "message": "boom", "headers": {"retry-after-ms": "10"}})
        model = openai_model(base_url=server.openai_url, timeout=30.0, retry_budget=1.5)
        try:
            with pytest.raises(
                ModelError,
                match=r"failed: no reply within the retry budget \(1.5 s\) after 1 retry; the last failure: server",
            ):
                asyncio.run(model.complete(hello, on_retry=retries))
        finally:
            release.set()
    assert [reason for _, _, reason in retries.calls] == ["server error (500): boom"]


def test_a_retry_after_past_the_budget_gives_up_at_once(
    server: WireServer, openai_model: MakeModel, hello: ModelRequest, sleep: FakeSleep
) -> None:
    server.push({"status": 429, "message": "slow down", "headers": {"retry-after": "100000"}})
    with pytest.raises(
        ModelError,
        match=r"slow down; the server asked to wait 28 h, longer than the 10 min left of retry_budget: giving up$",
    ):
        asyncio.run(openai_model(retry_budget=600).complete(hello))
    assert sleep.waits == []
    assert len(server.requests) == 1


def test_a_long_retry_after_within_the_budget_is_waited_in_full(
    server: WireServer, openai_model: MakeModel, hello: ModelRequest, sleep: FakeSleep, retries: Retries
) -> None:
    server.push({"status": 429, "message": "slow down", "headers": {"retry-after": "400"}}, {"text": "ok"})
    assert asyncio.run(openai_model(retry_budget=600).complete(hello, on_retry=retries)).text == "ok"
    assert sleep.waits == [400.0]
    assert retries.calls == [(1, 400.0, "rate limited (429): slow down")]


def test_x_should_retry_false_is_honoured(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"status": 503, "message": "down for good", "headers": {"x-should-retry": "false"}}, {"text": "ok"})
    with pytest.raises(ModelError, match=r"\(503\): down for good"):
        asyncio.run(openai_model().complete(hello))
    assert len(server.requests) == 1


def test_x_should_retry_true_is_honoured(
    server: WireServer, anthropic_model: Callable[..., AnthropicModel], hello: ModelRequest, retries: Retries
) -> None:
    server.push({"status": 400, "message": "try me again", "headers": {"x-should-retry": "true"}}, {"text": "ok"})
    assert asyncio.run(anthropic_model().complete(hello, on_retry=retries)).text == "ok"
    assert [reason for _, _, reason in retries.calls] == ["error (400): try me again"]
    assert len(server.requests) == 2


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_sdks_do_not_retry_on_their_own(
    server: WireServer,
    openai_model: MakeModel,
    anthropic_model: Callable[..., AnthropicModel],
    hello: ModelRequest,
    provider: str,
) -> None:
    server.push(*[{"status": 503, "message": "overloaded"}] * 3)
    model = openai_model(max_retries=0) if provider == "openai" else anthropic_model(max_retries=0)
    with pytest.raises(ModelError, match=r"\(503\): overloaded"):
        asyncio.run(model.complete(hello))
    assert len(server.requests) == 1


def test_a_refused_remote_connection_is_retried_a_little(
    openai_model: MakeModel, hello: ModelRequest, sleep: FakeSleep, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The proxy on this machine refuses; the server named is elsewhere, so a refusal may be a restart there.
    for var in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_closed_port()}")
    url = "http://models.example.com/v1"
    with pytest.raises(ModelError, match=f"^openai:gpt-test failed after 2 retries: {url} refused the connection$"):
        asyncio.run(openai_model(base_url=url, max_retries=6).complete(hello))
    assert len(sleep.waits) == 2


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://LOCALHOST./v1", True),
        ("http://ollama.localhost/v1", True),
        ("http://127.0.0.1:9/v1", True),
        ("http://127.1:9/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://0.0.0.0:8000", True),
        (f"http://{socket.gethostname()}:8000", True),
        ("https://api.openai.com/v1", False),
        ("http://192.168.1.20:8000/v1", False),
        ("http://[2001:db8::1]/v1", False),
    ],
)
def test_local_url(url: str, local: bool) -> None:
    assert local_url(url) is local


@pytest.mark.parametrize("spec", ["openai:gpt-test", "anthropic:claude-test", "openai-compatible:m@{url}/v1"])
def test_the_retry_budget_setting_reaches_the_model(server: WireServer, hello: ModelRequest, spec: str) -> None:
    # The first wait (at least half a second) is past the budget, so nothing really waits.
    server.push({"status": 500, "message": "boom"})
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    env |= {"OPENAI_BASE_URL": server.openai_url, "ANTHROPIC_BASE_URL": server.url}
    model = make_model(spec.format(url=server.url), Settings(retry_budget=0.4), env=env)
    with pytest.raises(ModelError, match=r"\(500\): boom; gave up after 1 try in .* \(retry_budget is 0\.4 s\)$"):
        asyncio.run(model.complete(hello))
    assert len(server.requests) == 1
