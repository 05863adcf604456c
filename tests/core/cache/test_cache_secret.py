"""A cache URL's password is never shown: ``redacted_url``, ``SecretURL`` (its repr, str, copies, the environment
variable it reads), what ``cache=`` refuses without quoting it, and a call whose Redis is down (its warning and
its log name the server without the password). No server is needed: the URLs name a unix socket that does not
exist, so every connection fails at once."""

from __future__ import annotations

import copy
import logging
import pickle
import warnings

import pytest

from tpc_core.cache import SecretURL, resolve_cache
from tpc_core.cache.resolve import CacheRegistry, check_cache_spec
from tpc_core.cache.secret import is_redacted, redacted_url, reveal

redis = pytest.importorskip("redis", reason="the Redis cache needs redis-py: pip install redis")
PASSWORD = "s3cretPassw0rd"
TEXT = ("The harbour opened in 1820. Its first ferry carried mail to the islands. A storm closed it in 1901. "
        "The town rebuilt the pier within a year. Tourists arrive every summer since.")


def test_redacted_url_hides_the_password_of_the_user_info_and_of_the_query():
    assert redacted_url(f"redis://:{PASSWORD}@cache:6379/0") == "redis://:***@cache:6379/0"
    assert redacted_url(f"rediss://app:{PASSWORD}@cache:6380/2") == "rediss://app:***@cache:6380/2"
    assert redacted_url(f"redis://cache:6379/0?password={PASSWORD}&socket_timeout=1") == \
        "redis://cache:6379/0?password=***&socket_timeout=1"
    assert redacted_url(f"unix://:{PASSWORD}@/run/redis.sock?db=1") == "unix://:***@/run/redis.sock?db=1"
    assert redacted_url("redis://cache:6379/0") == "redis://cache:6379/0"  # nothing to hide
    assert redacted_url(f"redis://:{PASSWORD}@[::1") == "***"  # does not parse: nothing of it is shown


def test_a_secret_url_shows_itself_redacted_and_gives_the_url_only_when_asked():
    url = f"redis://:{PASSWORD}@cache:6379/0"
    secret = SecretURL(url)
    assert repr(secret) == "SecretURL('redis://:***@cache:6379/0')" and str(secret) == "redis://:***@cache:6379/0"
    assert f"{secret}" == str(secret) and PASSWORD not in repr([secret]) + repr({"cache": secret})
    assert secret.get_secret_value() == url and reveal(secret) == url
    # copies keep the URL (a worker process must connect), equal by URL
    for twin in (copy.copy(secret), copy.deepcopy(secret), pickle.loads(pickle.dumps(secret))):
        assert twin == secret and hash(twin) == hash(secret) and twin.get_secret_value() == url
    assert secret != SecretURL("redis://:other@cache:6379/0") and secret != url


def test_a_secret_url_refuses_what_is_not_a_url_without_quoting_it():
    with pytest.raises(ValueError, match="not a URL") as error:
        SecretURL(PASSWORD)
    assert PASSWORD not in str(error.value)
    with pytest.raises(ValueError, match="empty"):
        SecretURL("  ")
    with pytest.raises(TypeError, match="str"):
        SecretURL(b"redis://h")  # type: ignore[arg-type]


def test_from_env_reads_the_variable_and_names_it_not_its_value(monkeypatch):
    url = f"redis://:{PASSWORD}@cache:6379/0"
    monkeypatch.setenv("TPC_CACHE_URL", url)
    secret = SecretURL.from_env()
    assert secret.get_secret_value() == url and secret.variable == "TPC_CACHE_URL" and PASSWORD not in repr(secret)
    monkeypatch.setenv("MY_REDIS", url)
    assert SecretURL.from_env("MY_REDIS").get_secret_value() == url
    monkeypatch.delenv("TPC_CACHE_URL")
    with pytest.raises(ValueError, match="TPC_CACHE_URL is not set"):
        SecretURL.from_env()
    monkeypatch.setenv("TPC_CACHE_URL", PASSWORD)
    with pytest.raises(ValueError, match="TPC_CACHE_URL holds a string that is not a URL") as error:
        SecretURL.from_env()
    assert PASSWORD not in str(error.value)


def test_a_secret_resolves_to_a_redis_cache_that_connects_with_the_password_and_names_the_server_without_it():
    pydantic = pytest.importorskip("pydantic")
    url = f"unix://:{PASSWORD}@/nonexistent/redis.sock?db=0"
    for spec in (url, SecretURL(url), pydantic.SecretStr(url)):
        cache = resolve_cache(spec)
        assert cache.client.connection_pool.connection_kwargs["password"] == PASSWORD  # what AUTH sends
        assert PASSWORD not in repr(cache) and "***" in repr(cache)
    registry = CacheRegistry()  # a secret and its URL are one server: one cache, one set of counts
    assert registry.resolve(SecretURL(url)) is registry.resolve(url)


def test_cache_checks_refuse_a_redacted_url_and_a_secret_that_is_not_a_redis_url_without_quoting_them():
    pydantic = pytest.importorskip("pydantic")
    assert is_redacted("redis://:***@cache:6379/0") and is_redacted("redis://cache/0?password=***")
    assert not is_redacted(f"redis://:{PASSWORD}@cache/0") and not is_redacted("redis://cache/0")
    for check in (check_cache_spec, resolve_cache):
        with pytest.raises(ValueError, match="password redacted"):
            check("redis://:***@cache:6379/0")
        with pytest.raises(ValueError, match="holds no Redis URL") as error:
            check(pydantic.SecretStr(f"/tmp/{PASSWORD}"))
        assert PASSWORD not in str(error.value)
    check_cache_spec(SecretURL(f"redis://:{PASSWORD}@cache:6379/0"))  # a URL is not a directory: nothing is made
    check_cache_spec(f"redis://:{PASSWORD}@cache:6379/0")


def test_a_call_whose_redis_is_down_logs_the_server_without_its_password(tiny, caplog):
    url = f"unix://:{PASSWORD}@/nonexistent/redis.sock?db=0"
    expected = tiny.compress(TEXT, question="When did the harbour open?", target_tokens=20)
    for spec in (url, SecretURL(url)):
        compressor = copy.deepcopy(tiny)  # a fresh cache registry: the outage is logged again
        caplog.clear()
        with caplog.at_level(logging.DEBUG), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = compressor.compress(TEXT, question="When did the harbour open?", target_tokens=20, cache=spec)
        assert result.compressed_prompt == expected.compressed_prompt and result.cache_misses == 1
        assert not [warning for warning in caught if "sentence cache" in str(warning.message)]
        shown = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "sentence cache" in
                 r.getMessage()]
        assert len(shown) == 1 and "unix://:***@/nonexistent/redis.sock" in shown[0]
        assert "could not read from unix://:***@/nonexistent/redis.sock" in caplog.text
        everything = "\n".join([*map(str, (w.message for w in caught)), caplog.text, repr(result),
                                str(result.to_dict()), repr(compressor.cache_info(spec))])
        assert PASSWORD not in everything
