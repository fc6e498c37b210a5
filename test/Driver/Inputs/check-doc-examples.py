#!/usr/bin/env python3
"""Runs the examples of a documentation page and checks what they print.

  check-doc-examples.py errors <page.md> <stencilc> <heat.st>
    Each "### `message`" section of the page (docs/troubleshooting.md) holds
    one example: an ```st block, compiled with `stencilc example.st -o
    example.cu`, or a ```console block whose "$ " lines run in order in a
    directory holding heat.st. The example (its last command) must fail with
    status 1, print the message, and leave no output file. Examples that
    run stencil-probe are skipped (and counted) where it is not built.

  check-doc-examples.py commands <page.md> <stencilc> <repo>
    Every "$ " line of the page's ```sh blocks (docs/user-guide.md) marked
    with "<!-- run -->" on the line before them runs, in order, in one
    scratch directory where the page's ```st blocks preceded by
    "<!-- file: NAME -->" were written; each must exit 0.

  check-doc-examples.py files <page.md> <dir>
    Writes every block of the page preceded by "<!-- file: NAME -->" to
    <dir>/NAME (directories made), for tests that build them.

  check-doc-examples.py outputs <page.md> <stencilc> <repo> [--update]
    (With --update it rewrites the page's outputs with what the commands
    print now, after a deliberate change, instead of checking.)
    Every ```console block of the page (docs/transformations.md) is a
    transcript: each "$ " line runs in the shell, in order, in one scratch
    directory where the page's ```st blocks preceded by "<!-- file: NAME -->"
    were written as the page reaches them, with stencilc's directory first
    on PATH. The lines after a command, up to the next "$ " line or the end
    of the block, must equal what it prints (stdout and stderr together),
    trailing white space of each line aside; its exit status is not checked,
    so a transcript may show an error. "$STENCILC_REPO" in a command stands
    for <repo>. A mismatch fails with the page line and a diff.
"""
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


FENCE = re.compile(r"(?:^|\n)([^\n]*)\n```([a-z]*)\n(.*?)\n```", re.S)


def blocks(text):
    """(kind, body, the line before the fence) of every fenced block."""
    return [(m.group(2), m.group(3), m.group(1)) for m in FENCE.finditer(text)]


def run(cmd, cwd, env):
    return subprocess.run(cmd, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)


def tool_env(stencilc):
    """The environment examples run in: stencilc's directory first on PATH,
    then those of stencil-lift and stencil-probe, built beside it
    (tools/stencil-lift/, tools/stencil-probe/). Absolute: the commands run
    in a scratch directory."""
    bindir = os.path.dirname(os.path.abspath(stencilc))
    lift = os.path.join(os.path.dirname(bindir), "stencil-lift")
    probe = os.path.join(os.path.dirname(bindir), "stencil-probe")
    return dict(os.environ, PATH=os.pathsep.join([bindir, lift, probe, os.environ["PATH"]]))


def check_errors(page, stencilc, heat):
    text = open(page, encoding="utf-8").read()
    sections = re.split(r"\n### `(.*)`\n", text)
    env = tool_env(stencilc)
    # stencil-probe is built only where CMake found a CUDA compiler; its
    # examples are skipped, and counted as skipped, where it is missing.
    have_probe = shutil.which("stencil-probe", path=env["PATH"]) is not None
    count = skipped = 0
    for msg, body in zip(sections[1::2], sections[2::2]):
        ex = blocks("\n" + body)
        if not ex or ex[0][0] not in ("st", "console"):
            fail(f"'{msg}': no ```st or ```console example")
        kind, code, _ = ex[0]
        if not have_probe and kind == "console" and "stencil-probe" in code:
            skipped += 1
            continue
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
    print(f"{count} error examples checked" +
          (f", {skipped} skipped (stencil-probe is not built)" if skipped else ""))


def write_file(d, name, code):
    path = os.path.join(d, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(code + "\n")


def extract_files(page, outdir):
    """Writes each block preceded by "<!-- file: NAME -->" to outdir/NAME."""
    count = 0
    for kind, code, before in blocks(open(page, encoding="utf-8").read()):
        m = re.match(r"<!-- file: (\S+) -->", before)
        if m:
            write_file(outdir, m.group(1), code)
            print(f"wrote {m.group(1)}")
            count += 1
    print(f"{count} files written")


def check_commands(page, stencilc, repo):
    text = open(page, encoding="utf-8").read()
    env = tool_env(stencilc)
    count = 0
    with tempfile.TemporaryDirectory() as d:
        for kind, code, before in blocks(text):
            m = re.match(r"<!-- file: (\S+) -->", before)
            if m:
                write_file(d, m.group(1), code)
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


def normalized(text):
    """Lines of `text` without trailing white space; a final newline ends
    the last line rather than starting an empty one, and no text is no
    lines."""
    if not text:
        return []
    if text.endswith("\n"):
        text = text[:-1]
    return [l.rstrip() for l in text.split("\n")]


def check_outputs(page, stencilc, repo, update=False):
    """With `update`, rewrites the page with the outputs the commands give
    now instead of failing (for a maintainer after a deliberate change)."""
    text = open(page, encoding="utf-8").read()
    replacements = []
    env = dict(tool_env(stencilc), STENCILC_REPO=repo)
    count = 0
    with tempfile.TemporaryDirectory() as d:
        for m in FENCE.finditer(text):
            before, kind, code = m.group(1), m.group(2), m.group(3)
            # The page line of the block's first body line.
            first = text.count("\n", 0, m.start(3)) + 1
            name = re.match(r"<!-- file: (\S+) -->", before)
            if name:
                with open(os.path.join(d, name.group(1)), "w", encoding="utf-8") as f:
                    f.write(code + "\n")
            if kind != "console":
                continue
            lines = code.split("\n")
            starts = [i for i, l in enumerate(lines) if l.startswith("$ ")]
            if not starts or starts[0] != 0:
                fail(f"{page}:{first}: a ```console block must start with a '$ ' line")
            for n, i in enumerate(starts):
                end = starts[n + 1] if n + 1 < len(starts) else len(lines)
                cmd = lines[i][2:].replace("$STENCILC_REPO", repo)
                want = [l.rstrip() for l in lines[i + 1:end]]
                got = normalized(run(cmd, d, env).stdout)
                if got != want and update:
                    replacements.append((m.start(3), lines, i, end, got))
                elif got != want:
                    diff = difflib.unified_diff(want, got, "the page", "the command", lineterm="")
                    fail(f"{page}:{first + i}: the output of '{cmd}' differs from the page:\n" +
                         "\n".join(diff))
                count += 1
    if update:
        # Rebuild each changed block from its last command backwards, then
        # the page from its last block backwards, so offsets stay valid.
        blocks = {}
        for start, lines, i, end, got in replacements:
            blocks.setdefault(start, (lines, []))[1].append((i, end, got))
        for start in sorted(blocks, reverse=True):
            lines, edits = blocks[start]
            body = list(lines)
            for i, end, got in sorted(edits, reverse=True):
                body[i + 1:end] = got
            old_body = "\n".join(lines)
            text = text[:start] + "\n".join(body) + text[start + len(old_body):]
        open(page, "w", encoding="utf-8").write(text)
        print(f"{len(replacements)} outputs updated")
        return
    print(f"{count} outputs checked")


if __name__ == "__main__":
    modes = {"errors": check_errors, "commands": check_commands, "outputs": check_outputs}
    if len(sys.argv) == 4 and sys.argv[1] == "files":
        extract_files(*sys.argv[2:])
        sys.exit(0)
    if len(sys.argv) == 6 and sys.argv[1] == "outputs" and sys.argv[5] == "--update":
        check_outputs(*sys.argv[2:5], update=True)
        sys.exit(0)
    if len(sys.argv) != 5 or sys.argv[1] not in modes:
        fail(__doc__)
    modes[sys.argv[1]](*sys.argv[2:])
