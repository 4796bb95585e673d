#!/usr/bin/env python3
"""Runs GNU Parallel 20221122's own local test functions against a `parallel` and compares each
function's output with the suite's wanted results.

Each file in tests-to-run/ defines `par_*` shell functions and ends with a driver that exports
them and runs every one as `par_X 2>&1` under `parallel --tag -k`, then filters the tagged
output (the file's own perl filters, and the suite's `s:$HOME:~:g`). This script does the same
per function, without the driver: the file's definitions are sourced once in bash, their
environment (exported functions included) is captured, and each function runs in its own
`bash -c 'par_X 2>&1'` with stdin from /dev/null, LANG=C, TMPDIR=/tmp/<file>-tmpdir, a private
HOME and the working directory $HOME/privat/parallel/testsuite, as upstream's Start.sh sets up.
Its output is tagged with the function's name, filtered as the file's driver filters it, and
compared byte for byte with that function's lines of wanted-results/<file>.

`--impl gnu` puts the installed GNU Parallel first on PATH; `--impl frun` puts a directory whose
`parallel` is a symlink to frun (frun picks its personality by the name it is called by). A
function's verdict is `agrees`, `differs`, `refuses` (frun printed one of its own `frun: ` lines,
i.e. it said it will not do something rather than doing it differently), `timeout`, or `set
aside` (the function needs env_parallel, parset, parcat or a tiny disk, none of which is GNU
Parallel's `parallel` command).

The files of one suite run one after another (they share paths in /tmp, as upstream), the
functions of a file concurrently with the file's own -j; a function that did not agree runs
once more, alone, and its second verdict stands (many functions race sleeps against each
other, which a busy small machine can turn around). With `--impl both`, only frun's functions
where GNU Parallel agreed run twice: those are the ones the comparison judges. Two runs must not
run at the same time on one machine for the same reason: a lock file serialises them.
"""

import argparse
import fcntl
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = [  # name, concurrency of the file's own driver, seconds a function may take here
    ("parallel-local-0.3s", 6, 60),
    ("parallel-local-1s", 6, 90),
    ("parallel-local-3s", 6, 120),
    ("parallel-local-10s", 10, 180),
]
DRIVER_LINE = "export -f $(compgen -A function | grep par_)"

# Functions that test other programs of the GNU Parallel package, or need a tiny disk mounted
# with sudo: not `parallel`'s behaviour, so not part of the 228.
SET_ASIDE = {
    "par_env_parallel_pipefail": "env_parallel",
    "par_do_not_export_PARALLEL_ENV": "env_parallel",
    "par_extglob": "env_parallel",
    "par_parset_tee": "parset and env_parallel",
    "par_empty_command": "parset and env_parallel",
    "par_totaljobs": "parset and env_parallel",
    "par_parset": "parset and env_parallel",
    "par_parset2": "parset and env_parallel",
    "par_parset_assoc_arr": "parset and env_parallel",
    "par_parcat_args_stdin": "parcat",
    "par_parcat_rm": "parcat",
    "par_disk_full": "a tiny disk mounted with sudo",
    "par_tmp_full": "a tiny disk mounted with sudo",
}


def functions_of(src):
    """The names of the `par_*` functions a test file defines, sorted as its driver sorts."""
    names = re.findall(r"^(par_[A-Za-z0-9_+-]+)\s*\(\)", src, re.M)
    return sorted(set(names))


def wanted_slices(text, names):
    """Each function's part of a wanted-results file: its tagged lines, in one string."""
    out = {}
    positions = []
    for n in names:
        m = re.search(r"(?m)^" + re.escape(n) + "\t", text)
        if m:
            positions.append((m.start(), n))
    positions.sort()
    for i, (start, n) in enumerate(positions):
        end = positions[i + 1][0] if i + 1 < len(positions) else len(text)
        out[n] = text[start:end]
    for n in names:
        out.setdefault(n, "")
    return out


def tag(name, data):
    """`--tag`: the name and a tab before every line, the last one too if unterminated."""
    if not data:
        return ""
    lines = data.split("\n")
    last = lines.pop()
    s = "".join(f"{name}\t{line}\n" for line in lines)
    if last:
        s += f"{name}\t{last}"
    return s


def post_filter(base, text, home, pwd):
    """The file's driver's filters, then Start.sh's `s:$HOME:~:g` (perl regexes, applied per
    line; the ones used here are literal apart from `.` in paths)."""
    out = []
    for line in re.findall(r"[^\n]*\n|[^\n]+$", text):
        if base in ("parallel-local-0.3s", "parallel-local-1s"):
            line = line.replace("/usr/bin", "/bin")
        if base == "parallel-local-10s":
            line = line.replace(",31,0", ",15,0", 1)
            line = line.replace("~", home)
            line = line.replace(pwd, ".")
            line = line.replace(home, "~")
        line = line.replace(home, "~")
        out.append(line)
    return "".join(out)


def capture_env(script, base_env, cwd):
    """Sources a test file's definitions (not its driver) and returns the environment its
    functions see: exported variables and every function, exported."""
    with open(script, encoding="utf-8", errors="surrogateescape") as f:
        src = f.read()
    cut = src.find(DRIVER_LINE)
    if cut < 0:
        sys.exit(f"run.py: {script}: no driver line")
    fd, prelude = tempfile.mkstemp(suffix=".sh")
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(src[:cut])
    try:
        dump = subprocess.run(
            [
                "bash",
                "-c",
                'source "$1" >/dev/null 2>&1 </dev/null; export -f $(compgen -A function); env -0',
                "bash",
                prelude,
            ],
            env=base_env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            check=True,
        ).stdout
    finally:
        os.unlink(prelude)
    env = {}
    for item in dump.split(b"\0"):
        if b"=" in item:
            k, v = item.split(b"=", 1)
            env[k.decode()] = v.decode(errors="surrogateescape")
    for k in ("_", "SHLVL", "PWD", "OLDPWD"):
        env.pop(k, None)
    return env, src


def run_function(name, env, cwd, timeout, seq):
    """Runs one function as the driver would; returns (output, seconds, timed_out)."""
    env = dict(env)
    env["PARALLEL_SEQ"] = str(seq)
    env["PARALLEL_JOBSLOT"] = str(seq)
    start = time.monotonic()
    p = subprocess.Popen(
        ["/bin/bash", "-c", f"{name} 2>&1"],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
    # What the function left running in its group (a background job) goes too.
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return out.decode(errors="surrogateescape"), time.monotonic() - start, timed_out


def verdict(impl, got, want, timed_out):
    if got == want:
        return "agrees"
    if timed_out:
        return "timeout"
    if impl == "frun" and re.search(r"(?m)^par_[^\t]*\tfrun: ", got):
        return "refuses"
    return "differs"


# The functions that need env_parallel/parset only; with --bash-companions FRUN_BASH they run
# (and only they), `env_parallel.bash` on PATH being a file that sources FRUN_BASH.
COMPANIONS = {n for n, why in SET_ASIDE.items() if "env_parallel" in why}


def run_suite(impl, frun, only, jobs_scale, keep, companions=None, again=lambda name: True):
    # No digits in the path: some functions turn every number of their output into 0.
    root = f"/tmp/gnu-parallel-suite-{impl}"
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    home = os.path.join(root, "home")
    pwd = os.path.join(home, "privat", "parallel", "testsuite")
    os.makedirs(pwd)
    os.makedirs(os.path.join(home, ".parallel"))
    open(os.path.join(home, ".parallel", "will-cite"), "w").close()
    # `stdout CMD…` runs CMD with its stderr sent to stdout: a tool the suite's author has
    # installed, not part of the suite.
    bindir = os.path.join(root, "bin")
    os.makedirs(bindir)
    with open(os.path.join(bindir, "stdout"), "w") as f:
        f.write('#!/bin/sh\nexec "$@" 2>&1\n')
    os.chmod(os.path.join(bindir, "stdout"), 0o755)
    path = bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin")
    if companions and impl == "frun":  # GNU's own env_parallel.bash is on PATH
        with open(os.path.join(bindir, "env_parallel.bash"), "w") as f:
            f.write(f'source {shlex.quote(os.path.abspath(companions))}\n')
        os.chmod(os.path.join(bindir, "env_parallel.bash"), 0o755)
    if impl == "frun":
        # A copy: a rebuild during the run must not change the program under test.
        shutil.copy(frun, os.path.join(bindir, "parallel"))
    else:
        gnu = shutil.which("parallel")
        if not gnu or b"GNU parallel" not in subprocess.run(
            [gnu, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ).stdout:
            sys.exit("run.py: no GNU Parallel on PATH")
    results = {}
    try:
        for base, jobs, timeout in FILES:
            script = os.path.join(HERE, "tests-to-run", base + ".sh")
            with open(
                os.path.join(HERE, "wanted-results", base),
                encoding="utf-8",
                errors="surrogateescape",
            ) as f:
                wanted_text = f.read()
            tmpdir = f"/tmp/{base}-tmpdir"
            os.makedirs(tmpdir, exist_ok=True)
            base_env = {
                "PATH": path,
                "HOME": home,
                "USER": os.environ.get("USER", "root"),
                "LOGNAME": os.environ.get("LOGNAME", "root"),
                "SHELL": "/bin/bash",
                "LANG": "C",
                "LC_ALL": "C",
                "TMPDIR": tmpdir,
                "TIMEOUT": "900",
                "TERM": "dumb",
            }
            env, src = capture_env(script, base_env, pwd)
            names = functions_of(src)
            want = wanted_slices(wanted_text, names)
            todo = []
            for n in names:
                if companions and n not in COMPANIONS:
                    continue
                if n in SET_ASIDE and not companions:
                    results[f"{n}/{base}"] = {
                        "name": n,
                        "file": base,
                        "verdict": "set aside",
                        "why": SET_ASIDE[n],
                    }
                elif not only or n in only:
                    todo.append(n)

            def one(item, env=env, pwd=pwd, timeout=timeout, want=want, base=base):
                seq, n = item
                out, secs, timed_out = run_function(n, env, pwd, timeout, seq)
                got = post_filter(base, tag(n, out), home, pwd)
                return f"{n}/{base}", {
                    "name": n,
                    "file": base,
                    "verdict": verdict(impl, got, want[n], timed_out),
                    "seconds": round(secs, 2),
                    "got": got,
                    "want": want[n],
                }

            with ThreadPoolExecutor(max(1, int(jobs * jobs_scale))) as pool:
                for n, r in pool.map(one, enumerate(todo, 1)):
                    results[n] = r
            # Many functions time their jobs (sleeps racing each other); with the file's
            # functions run side by side on a small busy machine, such a race can go the
            # other way than intended. A function that did not agree (and that `again`
            # names) runs once more, alone, and that run's verdict stands.
            for seq, n in enumerate(todo, 1):
                key = f"{n}/{base}"
                if results[key]["verdict"] in ("differs", "timeout") and again(n):
                    _, r = one((seq, n))
                    r["first"] = results[key]["verdict"]
                    results[key] = r
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", choices=["gnu", "frun", "both"], required=True)
    ap.add_argument("--frun", help="frun binary (for --impl frun or both)")
    ap.add_argument("--json", help="write every function's verdicts and output here")
    ap.add_argument(
        "--gnu-from",
        metavar="JSON",
        help="with --impl both: GNU Parallel's results from an earlier `--impl gnu --json` run "
        "on this machine, instead of running its half again",
    )
    ap.add_argument("--table", help="write `name TAB file TAB verdict…` lines here")
    ap.add_argument("--jobs-scale", type=float, default=1.0)
    ap.add_argument("--keep", action="store_true", help="keep the temporary HOME")
    ap.add_argument("--diff", action="store_true", help="print what differs")
    ap.add_argument(
        "--bash-companions",
        metavar="FRUN_BASH",
        help="run only the env_parallel/parset functions, with this frun.bash as env_parallel.bash",
    )
    ap.add_argument("only", nargs="*", help="run only these functions")
    a = ap.parse_args()
    sys.stdout.reconfigure(errors="backslashreplace")
    impls = ["gnu", "frun"] if a.impl == "both" else [a.impl]
    if "frun" in impls and not a.frun:
        ap.error("--impl frun needs --frun")
    # The suite's expected warnings about file handles were made with the usual soft limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
    lock = open("/tmp/gnu-parallel-suite.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    res = {}
    for impl in impls:
        start = time.monotonic()
        # With both, only what the comparison needs runs twice: frun's functions where GNU
        # Parallel agreed (a difference there fails the ratchet). GNU's own second runs never
        # turned a verdict round (43 of 43 still differed) and cost a minute and a half.
        again = lambda name: True
        if a.impl == "both":
            gnu = {r["name"] for r in res.get("gnu", {}).values() if r["verdict"] == "agrees"}
            again = (lambda name: False) if impl == "gnu" else (lambda name, g=gnu: name in g)
        if impl == "gnu" and a.gnu_from:
            with open(a.gnu_from, encoding="utf-8", errors="surrogateescape") as f:
                res["gnu"] = json.load(f)["gnu"]
            if a.only:
                res["gnu"] = {k: r for k, r in res["gnu"].items() if r["name"] in a.only}
        else:
            res[impl] = run_suite(
                impl, a.frun, set(a.only), a.jobs_scale, a.keep, a.bash_companions, again
            )
        counts = {}
        for r in res[impl].values():
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        print(
            f"{impl}: "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            + f" ({time.monotonic() - start:.0f} s)",
            file=sys.stderr,
        )
    # One function name is defined in two files: each file's is a function of its own.
    keys = sorted(res[impls[0]])
    rows = []
    for k in keys:
        first = res[impls[0]][k]
        rows.append([first["name"], first["file"]] + [res[i][k]["verdict"] for i in impls])
    print("\t".join(["function", "file"] + impls))
    for row in rows:
        print("\t".join(row))
        # Where GNU Parallel agrees and frun silently does not, the ratchet fails: what
        # frun printed is shown on stderr, so that the failure says why.
        if a.impl == "both" and row[2] == "agrees" and row[3] == "differs":
            import difflib

            r = res["frun"][f"{row[0]}/{row[1]}"]
            print(f"--- {row[0]}: frun differs where GNU Parallel agrees", file=sys.stderr)
            sys.stderr.writelines(
                difflib.unified_diff(
                    r["want"].splitlines(True), r["got"].splitlines(True), "wanted", "frun"
                )
            )
        if a.diff:
            import difflib

            for i in impls:
                r = res[i][f"{row[0]}/{row[1]}"]
                if r["verdict"] in ("agrees", "set aside"):
                    continue
                sys.stdout.writelines(
                    difflib.unified_diff(
                        r["want"].splitlines(True), r["got"].splitlines(True), "wanted", i
                    )
                )
    if a.table:
        with open(a.table, "w") as f:
            for row in rows:
                f.write("\t".join(row) + "\n")
    if a.json:
        with open(a.json, "w", encoding="utf-8", errors="surrogateescape") as f:
            json.dump(res, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
