#!/usr/bin/env python3
"""Runs findutils 4.9.0's own xargs tests against any xargs, without DejaGnu.

Usage: run_xargs_suite.py XARGS [ARG...]

XARGS [ARG...] is the xargs to test: `/usr/bin/xargs`, a link named `xargs` to frun, or
`frun xargs`. The program the tests start is always called `xargs` (a link or a two-line
wrapper on a private PATH), as `make check` does with the freshly built one.

The cases are the DejaGnu scripts in xargs/testsuite/xargs.{gnu,posix,sysv}/*.exp (each one
`xargs_start` call, run and checked as config/unix.exp does: exit status, stdout against
.xo, stderr against .xe unless the case skips it) and the shell scripts in tests/xargs/
(run unchanged under bash with a small stand-in for gnulib's tests/init.sh). It prints one
line per case, `PASS name` or `FAIL name: why`, then `passed N of M`, and exits 0 either way
(the caller judges the count).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "xargs", "testsuite")
SHELL_TESTS = os.path.join(HERE, "tests", "xargs")
TIMEOUT = 60

# The functions of gnulib's tests/init.sh that the two shell tests use.
INIT_SH = """\
fail=0
print_ver_() { :; }
fu_path_prepend_() { :; }
framework_failure_() { echo "framework failure" >&2; exit 99; }
compare() { diff -u "$1" "$2" >&2; }
Exit() { exit "$1"; }
"""


def tcl_words(text, variables):
    """Splits one Tcl command into its words (the subset the .exp files use: braces taken
    literally, double quotes and bare words with backslash and $variable substitution)."""
    words, i, n = [], 0, len(text)
    escapes = {"n": "\n", "t": "\t"}
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return words
        if text[i] == "{":
            depth, j = 1, i + 1
            while depth:
                if text[j] == "\\":
                    j += 2
                    continue
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            words.append(text[i + 1 : j - 1])
            i = j
            continue
        quoted = text[i] == '"'
        if quoted:
            i += 1
        word = []
        while i < n and (text[i] != '"' if quoted else text[i] not in " \t"):
            c = text[i]
            if c == "\\":
                word.append(escapes.get(text[i + 1], text[i + 1]))
                i += 2
            elif c == "$":
                m = re.match(r"\$(\w+)", text[i:])
                word.append(variables[m.group(1)])
                i += len(m.group(0))
            else:
                word.append(c)
                i += 1
        words.append("".join(word))
        i += 1 if quoted else 0


def dejagnu_cases():
    """(name, expected status, xargs argv words or a shell command, input, check stderr)."""
    for group in ("xargs.gnu", "xargs.posix", "xargs.sysv"):
        folder = os.path.join(SUITE, group)
        for exp in sorted(f for f in os.listdir(folder) if f.endswith(".exp")):
            env = {}
            call = None
            for line in open(os.path.join(folder, exp), encoding="utf-8"):
                m = re.match(r'set env\((\w+)\) "(.*)"', line)
                if m:
                    env[m.group(1)] = m.group(2)
                if line.startswith("xargs_start"):
                    call = line.strip()
            yield os.path.join(folder, exp[:-4]), env, call


def run_dejagnu(base, env, call, work):
    """Runs one case as config/unix.exp's xargs_start does; returns None or why it failed."""
    args = tcl_words(call, {"XARGS": "xargs", "XARGSFLAGS": ""})[1:]
    passfail, options = args[0], args[1]
    infile = args[2] if len(args) > 2 else ""
    errh = args[3] if len(args) > 3 else ""
    command = args[4] if len(args) > 4 else ""
    expected = int(passfail) if passfail[0].isdigit() else (0 if passfail[0] == "p" else 1)
    # A shell command word (sh -c {...}) is itself a Tcl command line.
    argv = tcl_words(command, {}) if command else ["xargs"] + tcl_words(options, {})
    source = os.path.join(SUITE, "inputs", infile) if infile else "/dev/null"
    with open(source, "rb") as stdin:
        try:
            done = subprocess.run(
                argv,
                stdin=stdin,
                capture_output=True,
                cwd=work,
                env=dict(os.environ, **env),
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return "timed out"
    if done.returncode != expected:
        return f"exit status {done.returncode}, expected {expected}"
    xo = base + ".xo"
    want_out = open(xo, "rb").read() if os.path.exists(xo) else b""
    if done.stdout != want_out:
        return f"stdout {done.stdout[:200]!r}, expected {want_out[:200]!r}"
    if errh.startswith("s"):
        return None
    xe = base + ".xe"
    err = re.sub(rb"(?m)^.*xargs:", b"xargs:", done.stderr)
    want_err = open(xe, "rb").read() if os.path.exists(xe) else b""
    if err != want_err:
        return f"stderr {done.stderr[:200]!r}, expected {want_err[:200]!r}"
    return None


def run_shell(script, srcdir, work):
    """Runs one of tests/xargs/*.sh unchanged; returns None or why it failed."""
    try:
        done = subprocess.run(
            ["bash", script],
            capture_output=True,
            cwd=work,
            env=dict(os.environ, srcdir=srcdir),
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return "timed out"
    if done.returncode == 0:
        return None
    return f"exit status {done.returncode}: " + done.stderr.decode(errors="replace")[-600:]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: run_xargs_suite.py XARGS [ARG...]")
    target = [os.path.abspath(sys.argv[1]) if os.sep in sys.argv[1] else sys.argv[1]]
    target += sys.argv[2:]
    root = tempfile.mkdtemp(prefix="xargs-suite.")
    try:
        bindir = os.path.join(root, "bin")
        os.mkdir(bindir)
        program = os.path.join(bindir, "xargs")
        if len(target) == 1 and shutil.which(target[0]):
            os.symlink(shutil.which(target[0]), program)
        else:
            with open(program, "w", encoding="utf-8") as f:
                quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in target)
                f.write(f'#!/bin/sh\nexec {quoted} "$@"\n')
            os.chmod(program, 0o755)
        os.environ["PATH"] = bindir + os.pathsep + os.environ["PATH"]
        os.environ["LC_ALL"] = "C"
        srcdir = os.path.join(root, "src")
        os.makedirs(os.path.join(srcdir, "tests"))
        with open(os.path.join(srcdir, "tests", "init.sh"), "w", encoding="utf-8") as f:
            f.write(INIT_SH)
        results = []
        for base, env, call in dejagnu_cases():
            work = tempfile.mkdtemp(dir=root)
            results.append((os.path.basename(base), run_dejagnu(base, env, call, work)))
        for script in sorted(os.listdir(SHELL_TESTS)):
            work = tempfile.mkdtemp(dir=root)
            why = run_shell(os.path.join(SHELL_TESTS, script), srcdir, work)
            results.append((script[:-3], why))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for name, why in results:
        print(f"PASS {name}" if why is None else f"FAIL {name}: {why}")
    passed = sum(why is None for _, why in results)
    print(f"passed {passed} of {len(results)}")


if __name__ == "__main__":
    main()
