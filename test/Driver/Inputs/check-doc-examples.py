#!/usr/bin/env python3
"""Runs the examples of a documentation page and checks what they print.

  check-doc-examples.py errors <page.md> <stencilc> <heat.st>
    Each "### `message`" section of the page (docs/troubleshooting.md) holds
    one example: an ```st block, compiled with `stencilc example.st -o
    example.cu`, or a ```console block whose "$ " lines run in order in a
    directory holding heat.st. The example (its last command) must fail with
    status 1, print the message, and leave no output file.

  check-doc-examples.py commands <page.md> <stencilc> <repo>
    Every "$ " line of the page's ```sh blocks (docs/user-guide.md) marked
    with "<!-- run -->" on the line before them runs, in order, in one
    scratch directory where the page's ```st blocks preceded by
    "<!-- file: NAME -->" were written; each must exit 0.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def blocks(text):
    """(kind, body, the line before the fence) of every fenced block."""
    out = []
    for m in re.finditer(r"(?:^|\n)([^\n]*)\n```([a-z]*)\n(.*?)\n```", text, re.S):
        out.append((m.group(2), m.group(3), m.group(1)))
    return out


def run(cmd, cwd, env):
    return subprocess.run(cmd, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)


def check_errors(page, stencilc, heat):
    text = open(page, encoding="utf-8").read()
    sections = re.split(r"\n### `(.*)`\n", text)
    env = dict(os.environ, PATH=os.path.dirname(stencilc) + os.pathsep + os.environ["PATH"])
    count = 0
    for msg, body in zip(sections[1::2], sections[2::2]):
        ex = blocks("\n" + body)
        if not ex or ex[0][0] not in ("st", "console"):
            fail(f"'{msg}': no ```st or ```console example")
        kind, code, _ = ex[0]
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(heat, os.path.join(d, "heat.st"))
            if kind == "st":
                with open(os.path.join(d, "example.st"), "w", encoding="utf-8") as f:
                    f.write(code + "\n")
                cmds = ["stencilc example.st -o example.cu"]
            else:
                cmds = [l[2:] for l in code.splitlines() if l.startswith("$ ")]
            for i, cmd in enumerate(cmds):
                # What the failing (last) command may not add to: the
                # directory as the setup commands left it.
                before = set(os.listdir(d))
                r = run(cmd, d, env)
                if i < len(cmds) - 1 and r.returncode != 0:
                    fail(f"'{msg}': setup command failed: {cmd}\n{r.stdout}")
            if r.returncode != 1:
                fail(f"'{msg}': exit status {r.returncode}, not 1:\n{r.stdout}")
            if msg not in r.stdout:
                fail(f"'{msg}': not printed; the output was:\n{r.stdout}")
            extra = set(os.listdir(d)) - before - {"example.st", "deep.st"}
            if extra:
                fail(f"'{msg}': files written on error: {sorted(extra)}")
        count += 1
    print(f"{count} error examples checked")


def check_commands(page, stencilc, repo):
    text = open(page, encoding="utf-8").read()
    env = dict(os.environ, PATH=os.path.dirname(stencilc) + os.pathsep + os.environ["PATH"])
    count = 0
    with tempfile.TemporaryDirectory() as d:
        for kind, code, before in blocks(text):
            m = re.match(r"<!-- file: (\S+) -->", before)
            if m:
                with open(os.path.join(d, m.group(1)), "w", encoding="utf-8") as f:
                    f.write(code + "\n")
            if kind == "sh" and before.strip() == "<!-- run -->":
                for line in code.splitlines():
                    if not line.startswith("$ "):
                        continue
                    cmd = line[2:].replace("$STENCILC_REPO", repo)
                    r = run(cmd, d, env)
                    if r.returncode != 0:
                        fail(f"'{cmd}' exited with {r.returncode}:\n{r.stdout}")
                    print(f"ok: {cmd}")
                    count += 1
    print(f"{count} commands checked")


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in ("errors", "commands"):
        fail(__doc__)
    (check_errors if sys.argv[1] == "errors" else check_commands)(*sys.argv[2:])
