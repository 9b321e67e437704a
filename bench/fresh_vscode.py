"""From a fresh machine to the first answer in VS Code, timed, as a user takes the path:

1. a clean clone of this repository (``git clone`` of its HEAD: what is committed);
2. a fresh venv, and ``pip install <clone>`` with no test extras, split into the downloads
   (``pip download --no-cache-dir``: what a user waits for on the network) and the install from
   those files (``pip install --no-index``: the user's machine's own time);
3. the ``.vsix`` built by ``npm run package`` in the clone (what CI builds and a user downloads:
   reported apart, not counted as the user's time);
4. ``code-server --install-extension codecite.vsix`` (code-server 4.139 = VS Code 1.139, from
   scripts/install_code_server.sh, standing in for the user's VS Code);
5. a window on a copy of tests/fixtures/sample_repo (or ``--repo``) with the venv's ``bin`` on
   ``PATH`` (an activated venv, as after ``pip install``), driven in headless Chromium: once the
   status item shows the index, Ctrl+Alt+C, the question typed, until the answer shows in VS
   Code's Chat view.

The user's time is steps 2 (install), 4 and 5; downloads are step 2's download. Wall times depend
on what else the machine runs and on the network. Not a timed test: run it by hand.

Run: ``python bench/fresh_vscode.py [--repo DIR] [--vsix FILE] [--keep DIR]``
(``--vsix`` skips the build and installs that file; ``--keep`` keeps the work folder).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "editors" / "vscode_real"
QUESTION = "how does the token bucket refill?"
BUILD = ("setuptools>=77", "wheel")  # pyproject's build-system: the install then needs no network


def timed(label: str, args: list[str], figures: dict[str, float], **kwargs: Any) -> None:
    print(f"… {label}", flush=True)
    started = time.monotonic()
    result = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
    figures[label] = time.monotonic() - started
    print(f"  {figures[label]:.1f} s", flush=True)
    if result.returncode != 0:
        output = f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        sys.exit(f"{label} failed ({result.returncode}):\n{output}")


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def first_answer(
    work: Path, code_server: Path, venv: Path, repo: Path, vsix: Path
) -> dict[str, Any]:
    """Installs the .vsix, opens the repository and asks; returns the driver's figures."""
    data = work / "code-server"
    for folder in ("ud/User", "exts", "xdg", "artifacts"):
        (data / folder).mkdir(parents=True, exist_ok=True)
    (data / "ud" / "User" / "settings.json").write_text("{}")  # a new user's: no settings yet
    (data / "config.yaml").write_text("bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n")
    node24 = code_server.parents[3] / "node" / "bin"
    env = {
        **os.environ,
        # An activated venv: the extension finds codecite-lsp on PATH.
        "PATH": f"{venv / 'bin'}{os.pathsep}{node24}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_DATA_HOME": str(data / "xdg"),
    }
    dirs = ["--config", str(data / "config.yaml"), "--user-data-dir", str(data / "ud")]
    dirs += ["--extensions-dir", str(data / "exts")]
    figures: dict[str, float] = {}
    timed(
        "code-server --install-extension",
        [str(code_server), *dirs, "--install-extension", str(vsix)],
        figures,
        env=env,
    )
    log = data / "code-server.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [
                *(str(code_server), *dirs, "--auth", "none", "--disable-telemetry"),
                *("--disable-update-check", "--disable-workspace-trust", str(repo)),
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            for line in log.read_text().splitlines():
                if "HTTP server listening on" in line:
                    url = line.split("listening on ")[1].split()[0]
            time.sleep(0.2)
        if url is None:
            sys.exit(f"code-server did not start:\n{log.read_text()[-2000:]}")
        config = {
            "url": f"{url}?folder={repo}",
            "workspace": str(repo),
            "artifacts": str(data / "artifacts"),
            "results": str(data / "results.json"),
            "playwrightFrom": str(ROOT / "editors" / "vscode" / "package.json"),
            "chromium": os.environ.get("CODECITE_CHROMIUM", "/usr/bin/chromium"),
            "question": QUESTION,
        }
        scenario = data / "scenario.json"
        scenario.write_text(json.dumps(config))
        driver = subprocess.run(
            ["node", str(Path(__file__).with_name("fresh_vscode_first_answer.mjs")), str(scenario)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        written = data / "results.json"
        results = json.loads(written.read_text()) if written.exists() else []
        answer = next((r for r in results if r["step"] == "first_answer"), None)
        window = next((r for r in results if r["step"] == "window"), None)
        if not answer or not answer["ok"] or not window:
            sys.exit(f"no first answer:\n{driver.stdout[-3000:]}\n{driver.stderr[-2000:]}")
        return {**figures, **window, "detail": answer["detail"]}
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", type=Path, default=ROOT / "tests" / "fixtures" / "sample_repo")
    parser.add_argument("--vsix", type=Path, help="install this .vsix instead of building one")
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="codecite-fresh-"))
    work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, float] = {}
    code_server = Path(
        subprocess.run(
            ["bash", str(ROOT / "scripts" / "install_code_server.sh")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()[-1]
    )
    clone, venv, wheels = work / "clone", work / "venv", work / "wheels"
    for old in (clone, venv, wheels):
        shutil.rmtree(old, ignore_errors=True)
    clone_args = ["git", "clone", "--quiet", "--depth", "1", f"file://{ROOT}", str(clone)]
    timed("git clone", clone_args, figures)
    timed("python -m venv", [sys.executable, "-m", "venv", str(venv)], figures)
    pip = str(venv / "bin" / "pip")
    timed(
        "pip download (no cache)",
        [pip, "download", "--quiet", "--no-cache-dir", "--dest", str(wheels), str(clone), *BUILD],
        figures,
    )
    timed(
        "pip install (from the downloads)",
        [pip, "install", "--quiet", "--no-index", "--find-links", str(wheels), str(clone)],
        figures,
    )
    vsix = args.vsix
    if vsix is None:
        extension = clone / "editors" / "vscode"
        npm_ci = ["npm", "ci", "--no-audit", "--no-fund"]
        timed("npm ci (.vsix build, CI)", npm_ci, figures, cwd=extension)
        timed(
            "npm run package (.vsix build, CI)", ["npm", "run", "package"], figures, cwd=extension
        )
        vsix = extension / "codecite.vsix"
    repo = work / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(args.repo, repo, ignore=shutil.ignore_patterns(".codecite"))
    reached = first_answer(work, code_server, venv, repo, vsix.resolve())
    figures["code-server --install-extension"] = float(reached["code-server --install-extension"])
    window = float(reached["window_to_answer_s"])
    figures["window opened -> first answer"] = window

    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(
        f"\nfresh machine -> first answer in VS Code ({when}, load {os.getloadavg()[0]:.1f}, "
        f"python {sys.version.split()[0]})"
    )
    for label, seconds in figures.items():
        print(f"  {label:<38} {seconds:7.1f} s")
    print(
        f"  downloads: {folder_mb(wheels):.0f} MB of wheels; venv {folder_mb(venv):.0f} MB; "
        f".vsix {vsix.stat().st_size / 1e6:.2f} MB"
    )
    user = (
        figures["python -m venv"]
        + figures["pip install (from the downloads)"]
        + figures["code-server --install-extension"]
        + window
    )
    print(f"  user's time (venv + install + --install-extension + window to answer): {user:.1f} s")
    print(f"  plus downloads: {figures['pip download (no cache)']:.1f} s")
    print(f"  first answer: {reached['detail']}")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
