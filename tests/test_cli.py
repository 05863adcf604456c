"""The `tpc` command, run as a user runs it (a subprocess)."""

import json
import subprocess
import sys

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
