"""A model server reached over plain HTTP costs no reading of the certificate bundle, and never lets TLS go
unchecked: its TLS context verifies, against no certificate at all."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable

import pytest

from plait.messages import ModelRequest
from plait.models import OpenAIModel
from wire_server import WireServer

MakeModel = Callable[..., OpenAIModel]


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def test_plain_http_reads_no_certificate_and_still_calls(
    server: WireServer, openai_model: MakeModel, hello: ModelRequest
) -> None:
    model = openai_model()
    server.push({"text": "hi"})
    assert asyncio.run(model.complete(hello)).text == "hi"
    tls = model._tls()
    assert tls.cert_store_stats()["x509"] == 0
    assert (tls.verify_mode, tls.check_hostname) == (ssl.CERT_REQUIRED, True)


def test_https_and_a_proxy_get_the_bundle(openai_model: MakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    assert openai_model(base_url="https://api.example.invalid/v1")._tls().cert_store_stats()["x509"] > 0
    monkeypatch.setenv("HTTP_PROXY", "https://proxy.example.invalid:3128")
    assert openai_model()._tls().cert_store_stats()["x509"] > 0
