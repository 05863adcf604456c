"""A Redis password given as ``cache=`` never shows: for any URL with user info, on every adapter that takes
``cache=``, in its ``repr`` and ``str``, ``model_dump`` (Python and JSON), LangChain's ``dumpd`` (what tracing
serialises), LlamaIndex's ``to_dict`` / ``to_json`` (what an ingestion pipeline persists), the errors of a bad
setting beside it, and, on calls whose Redis is down, in the events, warnings and logs; while copies keep the
password, so the adapter still connects with it (the real server: tests/core/cache/test_cache_redis.py)."""

from __future__ import annotations

import copy
import json
import logging
import pickle
import warnings
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")
pytest.importorskip("redis")

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.load import dumpd
from llama_index.core.schema import NodeWithScore, TextNode
from pydantic import SecretStr, ValidationError

from tpc_core.cache import SecretURL
from tpc_integrations._checks import TPCSettingsError
from tpc_integrations.langchain import TPCDocumentCompressor, TPCDocumentTransformer, TPCMessagesCompressor
from tpc_integrations.llama_index import TPCChatMemory, TPCNodePostprocessor, TPCTransform

ADAPTERS = (TPCDocumentCompressor, TPCDocumentTransformer, TPCMessagesCompressor, TPCNodePostprocessor, TPCTransform,
            TPCChatMemory)
# Characters a password may hold; the URL carries it percent-encoded where it must.
PASSWORD_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
PREFIX = "S3cr3t"  # every password starts with it: a truncated leak ("S3cr3t...") is found too


@st.composite
def redis_urls(draw) -> tuple[str, list[str]]:
    """A Redis URL with a password, and the strings that must never be shown (the password raw and as encoded)."""
    password = PREFIX + draw(st.text(PASSWORD_CHARS, min_size=4, max_size=24))
    encoded = quote(password, safe="")
    scheme = draw(st.sampled_from(["redis", "rediss", "unix"]))
    user = draw(st.sampled_from(["", "default", "app_user"]))
    if draw(st.booleans()) and scheme != "unix":  # the password as a query parameter, as redis-py reads it
        url = f"{scheme}://cache.internal:{draw(st.integers(1, 65535))}/0?password={encoded}"
    elif scheme == "unix":
        url = f"unix://{user}:{encoded}@/run/redis-{draw(st.integers(0, 99))}.sock?db={draw(st.integers(0, 15))}"
    else:
        host = draw(st.sampled_from(["127.0.0.1", "cache.internal", "10.0.0.7"]))
        url = f"{scheme}://{user}:{encoded}@{host}:{draw(st.integers(1, 65535))}/{draw(st.integers(0, 15))}"
    return url, [password, encoded, PREFIX]


def _shown(adapter) -> dict[str, str]:
    """Every form an adapter is shown or serialised in."""
    forms = {"repr": repr(adapter), "str": str(adapter), "model_dump": str(adapter.model_dump()),
             "model_dump_json": adapter.model_dump_json(), "dumpd": json.dumps(dumpd(adapter))}
    if hasattr(adapter, "to_dict"):  # LlamaIndex components
        forms["to_dict"] = str(adapter.to_dict())
        # to_json's own json.dumps, values it cannot encode written by repr (a wrapped Memory holds an enum it cannot)
        forms["to_json"] = json.dumps(adapter.to_dict(), default=repr)
    return forms


@pytest.fixture(scope="module")
def engine(tiny_checkpoint):
    """A tiny compressor: the adapters are built without checking or loading a model (no call runs here)."""
    from tpc_core import TPCCompressor

    return TPCCompressor.from_pretrained(tiny_checkpoint, device="cpu")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=redis_urls(), wrap=st.sampled_from(["str", "SecretStr", "SecretURL"]))
def test_no_adapter_shows_the_password_of_its_cache_url(engine, case, wrap):
    url, secrets = case
    cache = {"str": url, "SecretStr": SecretStr(url), "SecretURL": SecretURL(url)}[wrap]
    for adapter_class in ADAPTERS:
        adapter = adapter_class(compressor=engine, cache=cache)
        assert isinstance(adapter.cache, SecretURL) and adapter.cache.get_secret_value() == url
        for form, text in _shown(adapter).items():
            assert not any(secret in text for secret in secrets), f"{adapter_class.__name__} {form}: {text}"
        assert "***" in _shown(adapter)["repr"]  # the server is still named, its password masked
        # a bad setting beside it: the settings error (and pydantic's under it, which quotes the input) never the
        # password
        with pytest.raises(TPCSettingsError) as error:
            adapter_class(compressor=engine, cache=cache, rate=5)
        assert not any(secret in str(error.value) + str(error.value.__cause__) for secret in secrets)


@pytest.mark.parametrize("adapter_class, bad", [
    (TPCDocumentCompressor, {"target_tokens": 10, "rate": 0.5}),  # the settings' own check, after the fields
    (TPCDocumentTransformer, {"mode": "warm", "rate": 0.5}),  # a subclass's check, after the fields
    (TPCMessagesCompressor, {"task_description": "the task"}),
    (TPCNodePostprocessor, {"model": "tpc-mini", "model_name_or_path": "tpc-mini"}),  # the peer names' check
], ids=lambda value: value.__name__ if isinstance(value, type) else "")
@pytest.mark.parametrize("how", ["init", "model_validate"])
def test_an_error_about_the_whole_settings_quotes_them_without_the_password(engine, adapter_class, bad, how):
    """pydantic quotes the whole input in an error no field owns; every way in hides the password first."""
    url = "redis://app:S3cr3tPassw0rd@cache.internal:6379/0"
    with pytest.raises((ValidationError, TPCSettingsError)) as error:
        if how == "init":
            adapter_class(compressor=engine, cache=url, **bad)
        else:
            adapter_class.model_validate({"cache": url, **bad})
    # the constructor raises the one settings error, from pydantic's (which quotes the input)
    quoted = error.value.__cause__ if how == "init" else error.value
    assert isinstance(quoted, ValidationError)
    assert "S3cr" not in str(error.value) + str(quoted) + repr(quoted.errors())
    assert "cache.internal" in repr(quoted.errors())  # the input is quoted, its password hidden


@pytest.mark.parametrize("adapter_class", ADAPTERS, ids=lambda cls: cls.__name__)
def test_copies_keep_the_password_so_a_copy_connects_as_the_original(engine, adapter_class):
    url = "redis://app:s3cretPassw0rd@cache.internal:6379/0"
    adapter = adapter_class(compressor=engine, cache=url)
    for twin in (copy.deepcopy(adapter), pickle.loads(pickle.dumps(adapter)), adapter.model_copy()):
        assert isinstance(twin.cache, SecretURL) and twin.cache.get_secret_value() == url
        assert "s3cretPassw0rd" not in repr(twin)


def test_a_dump_cannot_restore_the_password_and_says_so(engine):
    url = "redis://:s3cretPassw0rd@cache.internal:6379/0"
    for adapter_class in (TPCNodePostprocessor, TPCTransform):
        dumped = adapter_class(compressor=engine, cache=url).to_dict()
        assert dumped["cache"] == "redis://:***@cache.internal:6379/0"
        with pytest.raises(ValueError, match="password redacted"):
            adapter_class.from_dict(dumped)
    assert TPCDocumentCompressor(compressor=engine, cache="redis://cache.internal:6379/0").cache == \
        "redis://cache.internal:6379/0"  # no password: kept as it is


class _Events(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, dict]] = []

    def on_custom_event(self, name, data, **kwargs) -> None:
        self.events.append((name, data))


@pytest.mark.slow
def test_calls_whose_redis_is_down_show_no_password_in_events_warnings_or_logs(compressor, short_texts, caplog):
    import llama_index.core.instrumentation as instrument
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler

    password = "s3cretPassw0rd"
    url = f"unix://:{password}@/nonexistent/redis-{id(caplog)}.sock"
    fresh = copy.deepcopy(compressor)  # its own cache registry: the outage is warned here
    seen: list[str] = []

    class Collector(BaseEventHandler):
        def handle(self, event, **kwargs) -> None:
            seen.append(repr(event))

    root = instrument.get_dispatcher()
    collector = Collector()
    root.add_event_handler(collector)
    handler = _Events()
    try:
        with caplog.at_level(logging.DEBUG), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            documents = [Document(page_content=text) for text in short_texts]
            kept = TPCDocumentCompressor(compressor=fresh, cache=url, target_tokens=40).compress_documents(
                documents, "Who is named?", callbacks=[handler])
            nodes = TPCNodePostprocessor(compressor=fresh, cache=url, target_tokens=40).postprocess_nodes(
                [NodeWithScore(node=TextNode(text=text)) for text in short_texts], query_str="Who is named?")
            messages = TPCMessagesCompressor(compressor=fresh, cache=url, target_tokens=60).invoke(
                [("system", "Answer briefly."), ("ai", " ".join(short_texts)), ("human", "Who is named?")],
                config={"callbacks": [handler]})
    finally:
        root.event_handlers.remove(collector)
    assert kept and nodes and messages and handler.events and seen  # the calls ran, uncached, and reported
    warned = [str(warning.message) for warning in caught]
    assert not any("sentence cache" in message for message in warned)  # an outage is logged, not warned
    logged = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert any("unix://:***@/nonexistent" in message for message in logged)  # the outage, the server named
    everything = "\n".join([*warned, caplog.text, repr(handler.events), *seen, repr(kept), repr(nodes),
                            repr(messages)])
    assert password not in everything
