"""Render a real compression as HTML and take a screenshot of it (``docs/result_html.png``).

It compresses the first paragraphs of the bundled Declaration of Independence with its question (prompt-aware,
the offline ``tpc-mini`` model, rate 0.3), writes the standalone page of :meth:`CompressionResult.to_html`, and
renders it with headless Chromium. Run it from the repository root::

    apt-get install -y chromium        # if `chromium` is not on PATH
    python docs/render_screenshot.py   # writes docs/result_html.png (and keeps the page with --html-out)

``--dark`` renders with the browser's dark colour scheme, to check that the page stays readable on it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = ROOT / "examples" / "data" / "declaration_of_independence.txt"
QUESTION = ROOT / "examples" / "data" / "declaration_of_independence.json"


def first_paragraphs(path: Path, count: int) -> str:
    """The first ``count`` blank-line separated paragraphs of a text file, with their separators."""
    return "\n\n".join(path.read_text(encoding="utf-8").split("\n\n")[:count])


def screenshot(page: Path, png: Path, *, width: int, height: int, dark: bool) -> None:
    """Render ``page`` with headless Chromium into ``png``."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        raise SystemExit("no Chromium on PATH: install it (apt-get install -y chromium) and run again")
    command = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--screenshot={png}", f"--window-size={width},{height}"]
    if dark:
        command.append("--force-dark-mode")
    subprocess.run([*command, page.as_uri()], check=True, capture_output=True, timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "result_html.png", help="the PNG to write")
    parser.add_argument("--html-out", type=Path, default=None, help="also keep the HTML page here")
    parser.add_argument("--paragraphs", type=int, default=3, help="how many paragraphs of the text to compress")
    parser.add_argument("--documents", action="store_true", help="pass the paragraphs as separate documents")
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--dark", action="store_true", help="render with the dark colour scheme")
    parser.add_argument("--size", default="1200,900", help="window size in pixels, WIDTH,HEIGHT")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))  # this checkout's tpc_core, not an installed one
    from tpc_core import TPCCompressor

    text = first_paragraphs(TEXT, args.paragraphs)
    prompt: str | list[str] = text.split("\n\n") if args.documents else text
    question = json.loads(QUESTION.read_text(encoding="utf-8"))["question"]
    result = TPCCompressor.from_pretrained("tpc-mini").compress(prompt, question=question, rate=args.rate)
    width, height = (int(part) for part in args.size.split(","))
    with tempfile.TemporaryDirectory() as folder:
        page = args.html_out or Path(folder) / "result.html"
        page.write_text(result.to_html(standalone=True), encoding="utf-8")
        screenshot(page.resolve(), args.out.resolve(), width=width, height=height, dark=args.dark)
    print(f"{result.origin_tokens} -> {result.compressed_tokens} tokens; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
