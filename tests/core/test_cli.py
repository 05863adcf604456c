"""The `tpc` command, run as a user runs it (a subprocess)."""

import json
import subprocess
import sys

import pytest

TEXT = ("The Eiffel Tower is in Paris. It was finished in 1889. Bananas are yellow. "
        "They grow in the tropics. The Great Wall is in China.")


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "tpc_core", *args], input=stdin, capture_output=True, text=True,
                          timeout=300)


def test_compress_file_with_question_json(tmp_path):
    path = tmp_path / "doc.txt"
    path.write_text(TEXT, encoding="utf-8")
    done = run("compress", str(path), "--question", "When was the Eiffel Tower finished?", "--target-tokens", "16",
               "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["compressed_tokens"] <= 16
    assert "It was finished in 1889." in result["compressed_prompt"]
    assert all(TEXT[s["start"]:s["end"]] == s["text"] for s in result["sentences"])


def test_compress_stdin_plain_and_errors(tmp_path):
    done = run("compress", "-", "--question", "bananas", "--rate", "0.5", stdin=TEXT)
    assert done.returncode == 0 and "Bananas are yellow." in done.stdout
    assert "[tpc]" in done.stderr
    assert run("compress", str(tmp_path / "missing.txt")).returncode != 0
    bad = run("compress", "-", "--rate", "2", stdin=TEXT)
    assert bad.returncode == 2 and "(0, 1]" in bad.stderr
    both = run("compress", "-", "--rate", "0.2", "--target-tokens", "5", stdin=TEXT)
    assert both.returncode == 2


def test_info():
    done = run("info")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["checkpoint"] == "tpc-mini" and info["device"] == "cpu" and "torch" in info


def test_input_errors_exit_2_before_any_model_loads(tmp_path, monkeypatch, capsys):
    from tpc_core import cli

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded before the input was checked")

    monkeypatch.setattr("tpc_core.compressor.TPCCompressor.from_pretrained", no_model)
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    cases = {(str(tmp_path / "missing.txt"),): "no such file", (str(tmp_path),): "is a directory",
             (str(empty),): "is empty", (str(empty), "--rate", "1.5"): "(0, 1]"}
    for args, message in cases.items():
        code = cli.main(["compress", *args])
        assert code == 2, args
        assert message in capsys.readouterr().err


def test_a_misspelt_model_name_gets_the_same_did_you_mean_as_the_api(tmp_path, capsys):
    from tpc_core import TPCCompressor, cli

    path = tmp_path / "doc.txt"
    path.write_text(TEXT, encoding="utf-8")
    assert cli.main(["compress", str(path), "--model", "tpc-mni"]) == 2
    error = capsys.readouterr().err
    assert "did you mean 'tpc-mini'" in error
    with pytest.raises(FileNotFoundError) as api:
        TPCCompressor.from_pretrained("tpc-mni")
    assert str(api.value) in error


def test_version_and_a_quiet_stderr(tmp_path):
    from tpc_core import __version__

    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"tpc-langchain {__version__}"
    path = tmp_path / "doc.txt"
    path.write_text(TEXT, encoding="utf-8")
    done = run("compress", str(path), "--question", "bananas", "--rate", "0.5")
    assert done.returncode == 0, done.stderr
    assert "FutureWarning" not in done.stderr and "Loading weights" not in done.stderr
    assert done.stderr.strip().startswith("[tpc]")


def test_the_cli_and_the_api_document_what_each_does_with_an_empty_input(tiny, monkeypatch, capsys):
    """The CLI refuses an empty input (exit code 2) where the API returns an empty result: both are documented."""
    import io
    from pathlib import Path

    from tpc_core import cli

    monkeypatch.setattr("sys.stdin", io.StringIO(" \n\t"))
    assert cli.main(["compress", "-"]) == 2
    assert "tpc: error: standard input is empty: nothing to compress" in capsys.readouterr().err
    result = tiny.compress(" \n\t", rate=0.5)
    assert (result.status, result.compressed_prompt, result.scored) == ("empty", "", False)

    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    section = " ".join(page.split("## Exit codes", 1)[1].split("\n## ", 1)[0].split())
    assert "2 for every usage or input error" in section and "**empty or whitespace-only input**" in section
    assert "standard input is empty: nothing to compress" in section
    assert 'compressor.compress("")` returns an empty result' in section
    compress_help = cli.build_parser()._subparsers._group_actions[0].choices["compress"].format_help()
    assert "whitespace-only input is an error (exit code 2)" in " ".join(compress_help.split())


_MODULES_AFTER_MAIN = """
import sys
from tpc_core.cli import main
code = main(sys.argv[1:])
heavy = sorted(name for name in ("torch", "transformers") if name in sys.modules)
print("HEAVY", ",".join(heavy) or "none", "CODE", code, file=sys.stderr)
"""


@pytest.mark.parametrize(("args", "message"), [
    (("--device", "bogus"), "is not a device name"),
    (("--device", "cuda:x"), "is not a device name"),
    (("--model", "./no/such/checkpoint"), "No such checkpoint directory"),
    (("--model", "tpc-mni"), "did you mean 'tpc-mini'"),
])
def test_errors_that_need_no_model_come_before_torch_and_transformers_are_imported(tmp_path, args, message):
    from tests.subprocess_helpers import run_in_checkout

    path = tmp_path / "doc.txt"
    path.write_text(TEXT, encoding="utf-8")
    done = run_in_checkout("-c", _MODULES_AFTER_MAIN, "compress", str(path), *args)
    assert message in done.stderr
    assert "HEAVY none CODE 2" in done.stderr, done.stderr


def test_a_prefix_of_a_flag_is_an_error_not_that_flag(tmp_path):
    path = tmp_path / "doc.txt"
    path.write_text(TEXT, encoding="utf-8")
    done = run("compress", str(path), "--rat", "0.2")
    assert done.returncode == 2
    assert "unrecognized arguments: --rat" in done.stderr
