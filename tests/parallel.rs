//! Differential corpus for `frun parallel`: every line of the table runs under bash twice, once
//! with `parallel` on PATH being GNU Parallel (Debian's) and once being frun's personality (a
//! link named `parallel`), each in a fresh directory holding the same files; stdout and the
//! exit status must be the same, and stderr where the case says it is part of the contract.
//! It does not test frun's own flags.

use crate::common::BIN;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// GNU Parallel as Debian installs it.
const GNU: &str = "/usr/bin/parallel";

/// Files every case finds in its directory.
const SETUP: &str = r#"
printf 'A\nB\nC\n' > abc-file
printf 'D\nE\nF\n' > def-file
printf 'A_B_C_' > abc_-file
printf 'A\0B\0C\0' > abc0-file
printf '1\t2\n3\t4\n' > tsv-file.tsv
printf 'f1\tf2\nA\tB\nC\tD\n' > hdr.tsv
printf 'a-b-c\nd-e-f\n' > dashes
printf 'a b\n"c d"\ne\\f\n' > tricky
printf "it's\n\$HOME\n*\n\n  pad  \nend\n" > nasty
printf 'root:x:0:0:root:/root:/bin/bash\nbin:x:1:1:bin:/bin:/usr/sbin/nologin\n' > passwd
mkdir -p dir/sub destdir out
touch a.log b.log c.txt 'sp ace.log' dir/sub/file.ex1.ex2 Upper.TXT foo.es.txt bar.es.txt
# -n: no name or time in the headers, so both runs' fixtures have the same bytes (a case greps them)
echo hello > h1; echo world > h2; gzip -n h1 h2
seq 10 > num10; seq 1000 > num1000; seq 30000 > num30000
"#;

/// A case: (mode, line, stdin). The line is bash; `parallel` in it is the tool under test.
/// Mode: "" compares stdout and status exactly and that stderr is empty for both or for
/// neither; `s` sorts stdout's lines first (the original's order is free); `e` compares stderr
/// exactly; `E` ignores stderr; `D:why` is a documented difference: the outputs must still
/// differ (so the list stays true), for the reason given.
type Case = (&'static str, &'static str, &'static str);

const CASES: &[Case] = &[
    ("", r"parallel -k --tag echo ::: a b ::: 1", ""),
    (
        "",
        r"parallel -k --tagstring '{2}-{1}:' echo x ::: a ::: 'p q'",
        "",
    ),
    ("", r#"parallel -k --tag 'printf "x\ny"' ::: a"#, ""),
    ("", r#"parallel -k --tag 'printf ""' ::: a"#, ""),
    ("", r"parallel -k --tag 'seq {}' ::: 2 3", ""),
    ("", r"parallel -k --tagstring 'job{#}' echo ::: a b", ""),
    // --- -E, -r, --shuf, -t, --joblog, --halt, --timeout, --delay, --bar/--eta/--progress.
    ("", r"parallel -k -E stop echo ::: a stop b", ""),
    ("", r"parallel -k -E stop echo", "a\nstop\nb\n"),
    ("", r"parallel -k -r echo '[{}]'", "a\n\n  \nb\n"),
    ("", r"parallel -k -r echo '[{}]' ::: a '' b", ""),
    ("s", r"parallel --shuf echo ::: 1 2 3 4 5 6", ""),
    ("e", r"parallel -j1 -t echo {} ::: 'a b' c", ""),
    ("e", r"parallel -j1 -t 'echo {} | cat' ::: 'a b'", ""),
    // --arg-sep / --arg-file-sep rename the markers; `:::` is then a value.
    ("", r"parallel -k --arg-sep ,, echo ,, a b ,, 1 2", ""),
    ("", r"parallel -k --argsep ,, echo ::: ,, a", ""),
    (
        "",
        r"parallel -k --arg-file-sep // echo // abc-file ::: 1",
        "",
    ),
    // -j FILE: the number of jobs is read from the file; an unreadable one is status 255.
    ("", r"echo 2 > jf; parallel -j jf -k echo ::: a b c", ""),
    (
        "",
        r"parallel -j no-such-jobs-file echo ::: 1 >/dev/null 2>&1; echo $?",
        "",
    ),
    // --termseq: a job over its time gets these signals, to its whole group, even once the
    // job's shell has ended (perl outlives it here).
    (
        "E",
        r#"parallel --termseq INT,200,TERM,100,KILL,25 -u --timeout 1 'perl -e '"'"'$|=1; for (qw(INT TERM)) { my $s = $_; $SIG{$s} = sub { print "Got $s\n" } } sleep 1 while 1'"'"'' ::: 1; echo $?"#,
        "",
    ),
    (
        "E",
        r#"parallel --termseq TERM,200,TERM,100,TERM,50,KILL,25 -u --timeout 1 'perl -e '"'"'$|=1; $SIG{TERM} = sub { print "Got TERM\n" }; sleep 1 while 1'"'"'' ::: 1; echo $?"#,
        "",
    ),
    // Sizes and counts: K, M, G are powers of 1024, k, m, g of 1000 (GNU Parallel's prefixes).
    ("", r"seq 300000 | parallel --pipe --block 1M -k wc -c", ""),
    ("", r"seq 300000 | parallel --pipe --block 1m -k wc -c", ""),
    ("", r"seq 3000 | parallel -n 1K -k echo | wc -l", ""),
    // --memfree: a job starts once that much memory is available (here at once).
    ("", r"parallel --memfree 1M -k echo ::: a b", ""),
    // --shellquote: each job's line, quoted (once per --shellquote), is printed, not run.
    (
        "",
        r#"parallel -k --shellquote ::: 'a b' "it's" '$x' '' plain"#,
        "",
    ),
    ("", r"parallel -k --shellquote echo {} ::: 'a b'", ""),
    ("", r"parallel -k --shellquote --shellquote ::: 'a b'", ""),
    (
        "",
        r#"perl -e 'print pack("c*",1..255)' | parallel -0 --shellquote"#,
        "",
    ),
    // Colours: each job's lines in its colour (by job number), failed jobs white on red with
    // --color-failed; a line gets the colour's end and a newline; a CR starts the colour again.
    ("", r"parallel -k --ctag echo ::: a b | od -c", ""),
    // A job's grouped stderr is dressed as its stdout is: coloured and tagged.
    (
        "",
        r"parallel -k --ctag 'echo o{}; echo e{} >&2' ::: a b 2>&1 | od -c",
        "",
    ),
    (
        "",
        r"parallel -k --color-failed 'echo o{}; echo e{} >&2; exit {}' ::: 0 1 2>&1 | od -c",
        "",
    ),
    (
        "",
        r#"parallel -k --color 'printf "x\ny"' ::: a | od -c"#,
        "",
    ),
    (
        "",
        r"parallel -k --color-failed 'echo {}; exit {}' ::: 0 1 2; echo $?",
        "",
    ),
    (
        "",
        r#"parallel -k --ctagstring '{}x' --color-failed 'printf "a\rb\n"; exit {}' ::: 0 1 | od -c"#,
        "",
    ),
    ("", r"seq 400 | parallel -k --color echo | md5sum", ""),
    // --lb: each whole line in its job's colour as it comes, a last line without its newline
    // only tagged; --color-failed alone colours nothing live.
    (
        "",
        r#"parallel -j1 --lb --color --tag 'printf "a{}\rb{}\nc"' ::: 1 2 | od -c"#,
        "",
    ),
    (
        "",
        r#"parallel -j1 --lb --ctagstring 'T{}' 'echo a{}; echo; printf b' ::: 1 2 | od -c"#,
        "",
    ),
    // --lb: stderr's lines are dressed as stdout's (its own relay pipe), a last one too.
    (
        "",
        r#"parallel -j1 --lb --tag 'echo o{}; echo e{} >&2; printf f >&2' ::: 1 2 2>&1 >/dev/null"#,
        "",
    ),
    (
        "",
        r#"parallel -j1 --lb --ctag 'echo o{}; echo e{} >&2' ::: 1 2 2>&1 >/dev/null | od -c"#,
        "",
    ),
    ("", r"parallel -j1 --lb 'seq 3 >&2; true' ::: 1 2 2>&1", ""),
    // Four relays' long stderr beside their stdout, into one pipe: no line is cut.
    (
        "",
        r"parallel --lb --tag 'seq 100000; seq 100000 >&2; true' ::: 1 2 3 4 2>&1 | sort | md5sum",
        "",
    ),
    (
        "",
        r"parallel -k --lb --color-failed 'echo {}; exit {}' ::: 0 1 | od -c",
        "",
    ),
    // --ll: each job's latest whole line (stdout and stderr together) on its row, cut to the
    // width (80 without a terminal) with '>', a last line without its end printed after the
    // tag as the job ends. How often a row is redrawn depends on timing, and so does whether
    // an empty one is drawn before the output comes: compared once each, without those. (GNU
    // Parallel's tput says on stderr that there is no terminal.)
    (
        "",
        r#"parallel -j1 --ll --tag 'printf "x{}\ny{}\tz\nend{}" | cat >&2' ::: 1 2 2>/dev/null | tr '\r' '\n' | grep -v '^[0-9] *$' | sort -u | od -c"#,
        "",
    ),
    (
        "",
        r#"parallel -j1 -k --ll 'seq -s " " 1 {}' ::: 30 40 2>/dev/null | tr '\r' '\n' | grep -v '^ *$' | sort -u"#,
        "",
    ),
    (
        "",
        r"parallel -j1 --ll -u --tag echo ::: a 2>/dev/null | tr '\r' '\n' | grep -v '^a *$' | sort -u",
        "",
    ),
    (
        "",
        r"parallel -j1 --ll --color-failed 'echo {}; exit {}' ::: 0 1 2>/dev/null | tr '\r' '\n' | grep -a $'\e' | sort -u | od -c",
        "",
    ),
    (
        "",
        r"parallel --color --files echo ::: a | grep -c $'\e'",
        "",
    ),
    // --tagstring reads \t, \n, \r and octal escapes, as GNU Parallel's does.
    (
        "",
        r"parallel -k --tagstring 'I{1}\tB{2}' echo ::: 1 ::: a",
        "",
    ),
    (
        "",
        r"parallel --tagstring '\089\9|\101' echo ::: 1 | od -c",
        "",
    ),
    // -S : is this machine (N/: its job slots); any other login is refused.
    ("", r"parallel -S 2/: -k echo ::: a b c", ""),
    ("", r"parallel --sshlogin : -k echo ::: a", ""),
    // --files --compress: each job's file holds its output compressed.
    (
        "",
        r#"for f in $(parallel -k --files --compress-program 'gzip -1' echo ::: hi ho); do zcat "$f"; rm -f "$f"; done"#,
        "",
    ),
    ("", r"parallel -k --quote echo ::: 'a b' 'c;d'", ""),
    // -p asks on the terminal (a pseudo-terminal here): y runs the job, anything else not.
    (
        "",
        r#"printf 'y\nn\n' | script -qc "parallel -j1 -p touch ::: a b" /dev/null >/dev/null; ls a b 2>&1; true"#,
        "",
    ),
    // --cat / --fifo: the block is in a file (a named pipe) whose name is {}.
    (
        "",
        r"seq 100000 | parallel -k --pipe --cat 'wc -l < {}'",
        "",
    ),
    (
        "",
        r"seq 100000 | parallel -k --pipe --fifo 'wc -l < {}'",
        "",
    ),
    ("", r"seq 3 | parallel -k --pipe --cat 'cat {} {}'", ""),
    (
        "",
        r"parallel -k --pipepart -a num30000 --block 10k --cat 'wc -l < {}'",
        "",
    ),
    // -t shows the lines in the order the jobs start, whichever worker starts one.
    (
        "e",
        r"seq 300 | parallel -j8 -k -t true {} 2>&1 >/dev/null",
        "",
    ),
    // --halt N% counts against all the jobs: the fourth never starts.
    (
        "E",
        r"parallel -j1 -k --halt now,fail=50% 'echo {#}:{}; exit {}' ::: 0 1 1 0; echo $?",
        "",
    ),
    ("e", r"parallel -j1 --verbose echo ::: x", ""),
    // -v shows each line on stdout, as the first line of its job's output (tagged, in order).
    ("e", r"parallel -k -v echo ::: a 'b c'", ""),
    ("e", r"parallel -k -v --tag 'echo {}; echo z' ::: a b", ""),
    ("e", r"parallel -k -tv echo ::: a", ""),
    ("e", r"seq 3 | parallel -k -v --pipe -N1 cat", ""),
    ("e", r"parallel -v -u echo ::: a", ""),
    // --tag / --tagstring with --pipe: {} is empty, {#} and {%} are the job's.
    (
        "",
        r"seq 3000 | parallel -j4 --pipe -N1000 -k --tagstring {%} wc",
        "",
    ),
    (
        "",
        r"seq 4 | parallel -k --pipe -N2 --tagstring '{#}-{}' cat",
        "",
    ),
    ("", r"seq 2 | parallel -k --pipe -N1 --tag cat", ""),
    ("", r"seq 2 | parallel -k --pipe -N1 --tag --lb cat", ""),
    ("", r"parallel -k --lb --tag echo ::: '' a", ""),
    // --retries 0: as many attempts as it takes.
    (
        "",
        r"parallel --retries 0 -u 'printf x >> cnt; n=$(stat -c %s cnt); echo $n; test $n -ge 3 # {}' ::: a",
        "",
    ),
    // -N0: no value on the line; a word that was only {} goes.
    ("", r"seq 2 | parallel -k -N0 echo replace {} curlies", ""),
    ("", r"parallel -k -N0 echo 'a{}b' '{#}' ::: x y", ""),
    // -N0 with no command: the values are dropped from the line they would have been, so
    // nothing runs (never the values as commands); two sources leave the space between them.
    ("", r"parallel -N0 ::: 'echo a' 'echo b'; echo $?", ""),
    ("", r"echo 'echo hi' | parallel -N0; echo $?", ""),
    (
        "",
        r"parallel -k -N0 --dry-run ::: 'echo a' b ::: c d | cat -A",
        "",
    ),
    ("", r"parallel -k -L0 -v ::: 'echo a' 'echo b' | cat -A", ""),
    // A job's line shows as written, blanks and all (-v, -t, --dry-run, the joblog, --halt's
    // message, a results table), with the space before appended values (-N0, --nonall: and
    // nothing after it), and nothing appended where the command reads the input.
    ("", r"parallel -k -v -N0 echo a {} b ::: 1 2", ""),
    ("", r"parallel -k -v -N0 echo ::: 1 | cat -A", ""),
    (
        "",
        r"parallel -k --dry-run -N0 ' echo {} x ' ::: 1 | cat -A",
        "",
    ),
    ("", r"parallel -k -v 'echo  x ' ::: 1 2 | cat -A", ""),
    (
        "",
        r#"parallel -k -v printf '[%s]\n' "a  b" '' ::: 1 | cat -A"#,
        "",
    ),
    ("e", r"parallel -k -t -X 'echo  x ' ::: 1 2", ""),
    (
        "",
        r"parallel -k --joblog - 'echo  x ' ::: 1 | cut -f9- | cat -A",
        "",
    ),
    ("e", r"parallel --halt now,fail=1 'false  x' ::: 1", ""),
    (
        "",
        r"parallel --results t.csv 'echo  a ' ::: 1; cut -d, -f9 t.csv | cat -A",
        "",
    ),
    ("", r"parallel --nonall -v echo hi | cat -A", ""),
    (
        "",
        r"seq 2 | parallel -k -v --pipe -N1 'cat  ' | cat -A",
        "",
    ),
    (
        "",
        r"seq 1 | parallel -k -v --pipe --tee echo ::: a | cat -A",
        "",
    ),
    // -q without a command: each value is a command word, quoted (never shell code).
    (
        "E",
        r"parallel -k -j1 -q ::: 'x>y' 'echo a' '$(touch z)'; ls",
        "",
    ),
    (
        "",
        r"parallel -k -q --colsep , --dry-run ::: 'a b,c' ''",
        "",
    ),
    (
        "E",
        r"parallel -q",
        "
",
    ),
    // -q around perl and --plus replacement strings: their values are single words.
    (
        "",
        r"parallel -k -q printf '[%s]' '{= s/a/A/ =}' ::: 'a b' x",
        "",
    ),
    (
        "",
        r"parallel -k -q --plus printf '[%s]' '{+/}' '{..}' ::: 'a b/c.d.e'",
        "",
    ),
    (
        "",
        r"parallel -k -q printf '[%s]' '{==}' ::: 'a\b' ::: c",
        "",
    ),
    ("", r#"parallel -k -q echo '{= =}x' ::: "q't""#, ""),
    // -q: a positional value the job lacks is an empty word; without -q, nothing.
    (
        "",
        r"parallel -k -q printf '[%s]' {3} {1} {-5} ::: a b ::: c",
        "",
    ),
    (
        "",
        r"parallel -k printf '[%s]' {3} {1} {-5} ::: a b ::: c",
        "",
    ),
    (
        "",
        r"parallel -k -N2 -q printf '[%s]' {3} {2} ::: a b c",
        "",
    ),
    (
        "",
        r"parallel -k -q -v echo '{= s/a/b/ =}' '{= $_=q() =}' ::: a",
        "",
    ),
    // {-N} past the first value counts from the end once more, as perl's arrays do.
    ("", r"parallel -k echo '[{-2}]' '[{-3}]' ::: a ::: b", ""),
    ("", r"parallel -k -N3 echo '[{-5}]' '[{-7}]' ::: a b c", ""),
    // A job's values as one flat list, every column of every record: {N} is its N-th, -N
    // and -X repeat a word holding {} (or {= =}) for each.
    (
        "",
        r"parallel -k -n2 echo '{=1 =}' '{=2 $_.=q(x) =}' ::: abc defg",
        "",
    ),
    (
        "",
        r"parallel -k -j1 -X echo '{= $_.=q(x) =}' ::: ab ::: c de",
        "",
    ),
    (
        "",
        r"printf 'a
b
' | parallel -k -j1 -X --colsep , echo '{1}'",
        "",
    ),
    (
        "",
        r"parallel -k -j1 -n2 echo '{2}' '{3}' ::: a b ::: c d",
        "",
    ),
    (
        "",
        r"printf 'a,b
c,d
' | parallel -k --colsep , -N2 echo '{1}{2}' '{-1}'",
        "",
    ),
    (
        "",
        r"parallel -k -N1 echo 'x{}' '{}{}' ::: a b :::+ c d",
        "",
    ),
    ("", r"parallel -k -N1 echo '[{}]' ::: 3 :::", ""),
    (
        "",
        r"parallel -k -N2 echo 'x{}' '{1}-{4}' ::: a b :::+ c d",
        "",
    ),
    (
        "",
        r"parallel -k -n2 --colsep , echo 'x{}' '{3}' ::: a,c b,d",
        "",
    ),
    ("", r"parallel -k -X --colsep , echo 'x{}' ::: a,b c,d", ""),
    (
        "",
        r"parallel -k --header : -N2 echo '{a}' ::: a 1 2 ::: b 3",
        "",
    ),
    // --halt names every job it counts as it ends: each failure with fail=, each success
    // with success=, every job ("finished") with done=, reached or not.
    ("e", r"parallel -j1 --halt now,done=1 echo ::: a b", ""),
    ("e", r"parallel -j1 --halt now,done=1 false ::: a b", ""),
    ("e", r"parallel -j1 --halt soon,fail=3 false ::: a b", ""),
    ("e", r"parallel -j1 --halt now,success=3 echo ::: a b", ""),
    ("e", r"parallel -j1 --halt now,fail=50% false ::: a b c", ""),
    (
        "e",
        r"parallel -j1 --halt soon,fail=2 'exit {}' ::: 0 1 2 3 4",
        "",
    ),
    (
        "e",
        r"parallel -j1 --halt now,fail=1 echo ::: c,d 'e f'",
        "",
    ),
    // -E's string counts only when perl finds it true: "" and "0" are no end.
    (
        "",
        r"parallel -k -j1 -E '' echo",
        "a

b
",
    ),
    (
        "",
        r"parallel -k -j1 -E 0 echo",
        "a
0
b
",
    ),
    (
        "",
        r"parallel -k -j1 -E0 echo",
        "a
0
b
",
    ),
    // -r: a value of nothing but perl's whitespace (\r and \v too) is no value.
    ("", r"parallel -k -j1 -r echo '[{}]'", "\r\nz\n\x0b\n"),
    ("", r"parallel -k -j1 -r --pipe cat", "a\n\r\n\x0b\nb\n"),
    // Values are quoted one by one where they go in a word (-v shows them so).
    ("", r"parallel -k -v echo 'x{}y' ::: 'a b' c,d", ""),
    (
        "",
        r"parallel -k -j1 --joblog - echo ::: c,d 'e f' | cut -f9-",
        "",
    ),
    // Output order as GNU Parallel settles it, whatever the options' order: -u over -k over
    // grouping; --no-keep-order undoes -k; --group with -u is an error.
    (
        "",
        r"parallel -u -k -j2 'sleep {}; echo {}' ::: 0.4 0.1",
        "",
    ),
    (
        "",
        r"parallel -k --group -j2 'sleep {}; echo {}' ::: 0.4 0.1",
        "",
    ),
    (
        "",
        r"parallel --no-keep-order -k -j2 'sleep {}; echo {}' ::: 0.4 0.1",
        "",
    ),
    ("e", r"parallel -u --group echo ::: a", ""),
    // The shell is the nearest shell above, by its name on PATH (`sh`, not what it links to).
    ("", r#"sh -c "parallel -k 'echo \$0' ::: a""#, ""),
    ("e", r#"sh -c "parallel nosuchcommand ::: a""#, ""),
    ("", r"timeout 20 parallel -k 'echo $0' ::: a", ""),
    // A tag is filled in as the line is: -X and -N repeat a word of it for each value, perl
    // and --plus strings are evaluated; a carriage return starts a tagged line too.
    (
        "",
        r"parallel -k -X -j1 --tagstring '<{}>' echo ::: a b",
        "",
    ),
    (
        "",
        r"parallel -k -N2 -j1 --tagstring '<{}>' echo x ::: 1 2",
        "",
    ),
    (
        "",
        r"parallel -k -m -j1 --tagstring '<{}>' echo ::: a b",
        "",
    ),
    (
        "",
        r"parallel -k -N2 -j1 --tagstring '{1}-{2}' echo ::: a b",
        "",
    ),
    (
        "",
        r"parallel -k -j1 --plus --tagstring '{+/} {##} {= $_.=q(x) =}' echo ::: a/b",
        "",
    ),
    (
        "",
        r#"parallel -k -j1 --tag 'printf "x\r\ny\r\n"' ::: a | cat -A"#,
        "",
    ),
    (
        "",
        r#"parallel -k -j1 --tag 'printf "x\ry"' ::: a | cat -A"#,
        "",
    ),
    (
        "",
        r#"parallel -k -j1 --ctag 'printf "x\ry\n"' ::: a | cat -A"#,
        "",
    ),
    // --tag is the job's values whatever -I names them; --tagstring '{}' is then text.
    ("", r"parallel -k -j1 --tag -I XX echo XX ::: a b", ""),
    (
        "",
        r"parallel -k -j1 --tagstring '{}' -I XX echo XX ::: a",
        "",
    ),
    // --header's own tab does not trim the columns (a --colsep given does).
    (
        "",
        r"parallel -k -j1 --header : echo '[{a}]' ::: a ' b '",
        "",
    ),
    (
        "",
        r"parallel -k -j1 --header : echo '{= $_=length($_) =}'",
        "a\r\ncd\r\n",
    ),
    (
        "",
        r"parallel -k -j1 --header : --colsep , echo '[{a}]' ::: a ' b '",
        "",
    ),
    // -i, -e, --replace, --eof: the value is optional, and the next word is it unless it
    // starts with '-'.
    (
        "",
        r"printf 'a\nEND\nb\n' | parallel -k --replace -eEND echo repl{}ce",
        "",
    ),
    (
        "",
        r"printf 'a\nEND\nb\n' | parallel -k --replace + -eEND echo repl+ce",
        "",
    ),
    (
        "",
        r"printf 'a\nEND\nb\n' | parallel -k -i -e END echo x{}",
        "",
    ),
    ("", r"printf 'a\nEND\nb\n' | parallel -k --eof END echo", ""),
    ("", r"printf 'a\n-\nb\n' | parallel -k -e - echo", ""),
    // --header : without --colsep names tab-separated columns; a CRLF header line's names.
    (
        "",
        r"printf 'A\tB\n1\tone\n' | parallel --header : echo {B} {A}",
        "",
    ),
    (
        "",
        r"printf 'foo\r\nbar\r\n' | parallel --colsep , --header : echo {foo}",
        "",
    ),
    // --colsep trims Perl's \s (a CRLF line's CR too), --trim l only on the left.
    (
        "",
        r"printf ' a \f\r\nb\x0b,c\n' | parallel -k --colsep , echo '[{1}]'",
        "",
    ),
    (
        "",
        r"printf ' a \r\n' | parallel --trim l --colsep , echo '[{1}]'",
        "",
    ),
    // $PARALLEL: options first, then the command line's; other words before the command.
    (
        "",
        r"PARALLEL=' -v' parallel echo ::: 'space in envvar OK'",
        "",
    ),
    (
        "",
        r#"PARALLEL="-k --tagstring 'x y'" parallel echo ::: a b"#,
        "",
    ),
    ("", r"PARALLEL='-j1 echo' parallel -k ::: a b", ""),
    ("", r"PARALLEL='-j1' parallel -k -j2 echo ::: a b", ""),
    // Profiles (-J, the default `config`) in $PARALLEL_HOME, before $PARALLEL's options.
    (
        "",
        r"mkdir ph; echo --tag > ph/t; PARALLEL_HOME=$PWD/ph parallel -J t echo ::: a",
        "",
    ),
    (
        "",
        r"printf '%s\n' '# a comment' '-k --tagstring x' > p; parallel -J ./p echo ::: a b; parallel -J $PWD/p echo ::: c",
        "",
    ),
    (
        "",
        r"mkdir ph; printf '%s\n' -k --tag > ph/config; PARALLEL_HOME=$PWD/ph parallel echo ::: a b; PARALLEL_HOME=$PWD/ph parallel --plain -k echo ::: c d",
        "",
    ),
    (
        "",
        r"mkdir ph; echo --tag > ph/t; PARALLEL_HOME=$PWD/ph parallel -k echo -J t ::: a; PARALLEL_HOME=$PWD/ph parallel -kJt echo ::: b",
        "",
    ),
    (
        "",
        r"mkdir ph; echo '-j1 --tagstring p echo' > ph/t; PARALLEL='--tagstring e' PARALLEL_HOME=$PWD/ph parallel -J t -k ::: a b",
        "",
    ),
    (
        "D:a profile others can write is refused (GNU Parallel reads it)",
        r"mkdir ph; echo --tag > ph/t; chmod 666 ph/t; PARALLEL_HOME=$PWD/ph parallel -J t echo ::: a; echo $?",
        "",
    ),
    (
        "D:a named profile found nowhere is an error (GNU Parallel ignores the -J)",
        r"parallel -J no-such-profile echo ::: a; echo $?",
        "",
    ),
    // --process-slot-var: the job's slot, from 0, in the job's environment.
    (
        "s",
        r"seq 4 | parallel -j4 --process-slot-var=n 'sleep 0.{}; echo $n'",
        "",
    ),
    (
        "",
        r"seq 3 | parallel -j1 --process-slot-var n -q sh -c 'echo $n:$0'",
        "",
    ),
    // A later job takes the lowest slot free when it starts, not its worker's.
    (
        "",
        r"seq 0.2 0.2 1 | parallel -n1 -P4 --process-slot-var=n -q bash -c 'sleep $1; echo $n' _",
        "",
    ),
    // $PARALLEL_ENV: code run before each job's line in its shell; a file's content; not
    // shown by -v, and not inherited by the jobs.
    ("", r"PARALLEL_ENV='v=ok' parallel -v echo '$v' ::: a", ""),
    (
        "",
        r"echo 'f() { echo f$1; }' > envf; PARALLEL_ENV=$PWD/envf parallel -k f ::: a b",
        "",
    ),
    (
        "",
        r"PARALLEL_ENV='v=1' parallel -k 'echo ${PARALLEL_ENV-unset} {}' ::: a; PARALLEL_ENV='v=1' parallel echo ::: plain",
        "",
    ),
    (
        "",
        r#"PARALLEL_ENV=$'a=1\001b=2' parallel -k 'echo $a$b {} $0 $#' ::: x"#,
        "",
    ),
    (
        "",
        r"parallel -j1 --joblog jl 'exit {}' ::: 0 1 2; echo $?; cut -f1,2,5-9 jl",
        "",
    ),
    (
        "",
        r"parallel -j1 --joblog jl 'echo {}; echo x{} | tr x y' ::: a 'b c'; cut -f1,5,6,7,9 jl",
        "",
    ),
    (
        "",
        r"parallel -j1 --joblog jl echo ::: 'a b' c; cut -f1,6,7,9 jl",
        "",
    ),
    // With -k the joblog is in input order too (a job that ends first waits for its line).
    (
        "",
        r"parallel -k -j3 --joblog jl 'sleep {}; echo {}' ::: 0.6 0.1 0.3; cut -f1,7,9 jl",
        "",
    ),
    (
        "",
        r"parallel -k -j3 --joblog - 'sleep {}; echo {}' ::: 0.6 0.1 0.3 | cut -f1,7,9",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt now,fail=1 'echo {}; exit {}' ::: 0 3 0; echo $?",
        "",
    ),
    // The job that reached --halt is named as GNU Parallel names it; bad values in its words.
    (
        "",
        r"parallel -j1 -k --halt now,fail=1 'echo {}; exit {}' ::: 0 3 0; echo $?",
        "",
    ),
    (
        "",
        r"parallel -j1 --halt now,success=1 true ::: 'a b'; echo $?",
        "",
    ),
    (
        "",
        r"parallel --halt soon,x echo ::: a; parallel --halt now,fail echo ::: a; parallel --halt error echo ::: a; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt soon,fail=2 'echo {}; exit {}' ::: 0 1 0 1 0 0; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt now,success=1 'echo {}; exit {}' ::: 1 0 1; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt 2 'echo {}; exit {}' ::: 0 5 0; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt never 'echo {}; exit {}' ::: 0 5 0; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -k --timeout 1 'sleep {}; echo {}' ::: 0.1 5 0.2; echo $?",
        "",
    ),
    // A job killed for its time is named as GNU Parallel names it.
    (
        "",
        r"parallel -k --timeout 1 'sleep {}; echo {}' ::: 0.1 5 0.2; echo $?",
        "",
    ),
    ("", r"parallel -j2 --delay 0.2 -k echo ::: a b c", ""),
    ("E", r"parallel -k --bar echo ::: a b", ""),
    ("E", r"parallel -k --eta echo ::: a b", ""),
    ("E", r"parallel -k --progress echo ::: a", ""),
    // GNU's table of machines comes first, on a pipe too.
    (
        "",
        r"parallel --progress -j3 true ::: 1 2 2>&1 >/dev/null | grep -a 1:local",
        "",
    ),
    // --- --halt with percentages and done; --timeout N%.
    (
        "E",
        r"parallel -k --timeout 200% 'sleep {}; echo {}' ::: 0.21 0.22 0.3 3 0.23; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -k --timeout 0.5 'sleep {}; echo {}' ::: 0.1 0.2 2 3; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt soon,fail=20% 'echo {}; exit {}' ::: 0 1 2 3 4 5 6 7 8 9; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt now,fail=50% 'echo {}; exit {}' ::: 0 1 1 0; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt 50% 'echo {}; exit {}' ::: 0 1 1 0 0 0; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt soon,fail=99% 'exit {}' ::: 1 0 0 0 0 0 0; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt soon,done=99% 'exit {}' ::: 1 0 1 0 1 0 1 0 1; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt now,done=50% 'exit {}' ::: 1 0 1 0; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt soon,success=50% 'echo {}; exit {}' ::: 1 0 0 1; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt soon,success=99% 'exit {}' ::: 1 1 0; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt soon,success=1 'echo {}; exit {}' ::: 1 0 1; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt now,success=1 'echo {}; exit {}' ::: 1 2 3 0 4 5 6; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt soon,fail=1 'echo {}; exit {}' ::: 0 0 1 2 3; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt soon,done=1 'echo {}' ::: a b c; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt now,done=2 'echo {}; exit {}' ::: 0 1 0 1; echo $?",
        "",
    ),
    (
        "D:--halt done=N (N > 1) when no job failed: GNU exits 101 (its status for more than 100 failed jobs); frun exits 0",
        r"parallel -j1 -k --halt now,done=2 'echo {}' ::: a b c d 2>/dev/null; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt 1 'echo {}; exit {}' ::: 0 2 0; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j1 -k --halt -1 'echo {}; exit {}' ::: 1 0 1; echo $?",
        "",
    ),
    // The status counts the jobs failed when the halt was reached, not those still running.
    (
        "E",
        r"parallel -j2 --halt soon,fail=3 'sleep {}; exit 1' ::: 0.1 0.2 1 1.5 1 1; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j2 --halt soon,fail=50% 'sleep {}; exit 1' ::: 0.1 0.2 1 1.5 1 1; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j2 --halt soon,done=2 'sleep {}; exit 1' ::: 0.1 0.2 1 1; echo $?",
        "",
    ),
    (
        "E",
        r"parallel -j3 --halt now,fail=2 'sleep {}; exit 1' ::: 0.1 0.2 3 3 3; echo $?",
        "",
    ),
    // --- Input sources (the tutorial's "Input sources" section).
    ("", r"parallel -k echo ::: A B C", ""),
    ("", r"parallel -k -a abc-file echo", ""),
    ("", r"cat abc-file | parallel -k echo", ""),
    ("", r"parallel -k echo ::: A B C ::: D E F", ""),
    ("", r"parallel -k -a abc-file -a def-file echo", ""),
    ("", r"cat abc-file | parallel -k -a - -a def-file echo", ""),
    ("", r"cat abc-file | parallel -k echo :::: - def-file", ""),
    ("", r"parallel -k echo ::: A B C :::: def-file", ""),
    ("", r"parallel -k --link echo ::: A B C ::: D E F", ""),
    ("", r"parallel -k --link echo ::: A B C D E ::: F G", ""),
    (
        "",
        r"parallel -k echo :::: abc-file :::+ G H I :::: def-file",
        "",
    ),
    (
        "",
        r"parallel -k echo :::: abc-file ::: G H I ::::+ def-file",
        "",
    ),
    ("", r"parallel -k echo ::: A B C D E :::+ F G", ""),
    ("", r"parallel -k -d _ echo :::: abc_-file", ""),
    ("", r"parallel -k -d '\0' echo :::: abc0-file", ""),
    ("", r"parallel -k -0 echo :::: abc0-file", ""),
    ("", r"parallel -k ::: ls 'echo foo' pwd", ""),
    (
        "",
        r"my_func() { echo in my_func $1; }; export -f my_func; parallel -k my_func ::: 1 2 3",
        "",
    ),
    (
        "",
        r"parallel -k echo {1} {2} {3} ::: 6 7 ::: 4 5 ::: 1 2 3",
        "",
    ),
    (
        "",
        r"parallel -k echo {1} {2} {3} :::: <(seq 6 7) <(seq 4 5) :::: <(seq 1 3)",
        "",
    ),
    (
        "",
        r"parallel -k -a <(seq 6 7) echo {1} {2} {3} :::: <(seq 4 5) :::: <(seq 1 3)",
        "",
    ),
    (
        "",
        r"parallel -k -a <(seq 6 7) -a <(seq 4 5) echo {1} {2} {3} ::: 1 2 3",
        "",
    ),
    (
        "",
        r"seq 6 7 | parallel -k -a - -a <(seq 4 5) echo {1} {2} {3} ::: 1 2 3",
        "",
    ),
    (
        "",
        r"seq 4 5 | parallel -k echo {1} {2} {3} :::: <(seq 6 7) - ::: 1 2 3",
        "",
    ),
    (
        "",
        r"parallel -k echo ::: a b c :::+ 1 2 3 ::: X Y :::+ 11 22",
        "",
    ),
    ("", r"parallel -k echo {1} {2} ::: 1 2 3 ::: a b c", ""),
    (
        "",
        r"parallel -k --link echo {1} {2} ::: 1 2 3 ::: a b c",
        "",
    ),
    (
        "",
        r"parallel -k --link echo {1} {2} {3} ::: 1 2 ::: a b c d ::: X",
        "",
    ),
    ("", r"parallel -k echo ::: 0 1 ::: 0 1 ::: 0 1 ::: 0 1", ""),
    (
        "",
        r"parallel -k --link -a <(seq 6) -a <(seq 6 -1 1) echo",
        "",
    ),
    (
        "",
        r"parallel -k --link echo :::: <(seq 6) <(seq 6 -1 1)",
        "",
    ),
    (
        "",
        r"parallel -k echo {1} - {2} ::::+ <(head -n -1 num10) <(tail -n +2 num10)",
        "",
    ),
    (
        "",
        r"a=(x y z); parallel -k echo {1} - {2} ::: ${a[@]::${#a[@]}-1} :::+ ${a[@]:1}",
        "",
    ),
    (
        "",
        r"parallel -k echo {1} {2} ::: red green blue ::: S M L XL XXL | sort",
        "",
    ),
    ("", r"parallel -k echo :::", ""),
    ("", r"parallel -k echo ::: a ::: ", ""),
    // A last word that is the first marker is dropped: the values come from stdin.
    ("", r"parallel -k echo x :::", "a\nb\n"),
    ("", r"parallel -k echo x ::::", "a\n"),
    ("", r"parallel -k echo x :::+", "a\n"),
    ("", r"parallel -k :::", "echo a\n"),
    // An empty source beside others that hold values is one empty value; all empty: nothing.
    ("", r"parallel -k echo x ::: :::", "a\n"),
    ("", r"parallel -k echo x :::: :::", "a\n"),
    ("", r"parallel -k echo x ::: a ::::", "z\n"),
    ("", r"parallel -k echo x {1}-{2} :::: /dev/null ::: a b", ""),
    ("", r"parallel -k echo x ::: a b :::: /dev/null", ""),
    ("", r"parallel -k echo x :::: /dev/null ::: ::: a", ""),
    ("", r"parallel -k echo x :::: /dev/null ::::+ num10", ""),
    ("", r"parallel -k echo x :::: /dev/null :::: /dev/null", ""),
    ("", r"parallel -k -r echo x ::: a ::: ' '", ""),
    ("", r"parallel -k -E b echo x ::: a b c ::: b 1 2", ""),
    ("", r"parallel -k --header : echo {1} {2} ::: a b c :::", ""),
    ("", r"parallel -k --header : echo {1} {2} ::: a b ::: x", ""),
    ("", r"parallel -k --header : echo {1} {2} ::: a ::: x", ""),
    (
        "",
        r"parallel -k --header : echo {1} {2} :::: /dev/null ::: a b",
        "",
    ),
    ("", r"parallel -k --header : echo {1} {2} ::: :::", ""),
    ("", r"parallel -k echo ::: a b :::+ 1", ""),
    ("", r"parallel -k echo :::: /dev/null", ""),
    ("", r"parallel -k echo < /dev/null", ""),
    ("", r"printf 'x\ny' | parallel -k echo", ""),
    ("", r"printf '\n\n' | parallel -k echo '[{}]'", ""),
    ("", r"parallel -k echo :::: num10 | tail -3", ""),
    ("", r"parallel -k -a abc-file echo {} ::: 1 2", ""),
    ("", r"parallel -k --arg-file def-file echo", ""),
    ("", r"parallel -k echo ::::+ abc-file def-file", ""),
    ("", r"parallel -k -a abc-file --link -a <(seq 2) echo", ""),
    ("", r"parallel -k echo ::: 'a b' 'c d'", ""),
    ("", r"parallel -k echo :::: tricky", ""),
    ("", r"parallel -k echo {} :::: nasty", ""),
    ("", r"parallel -k 'echo [{}]' :::: nasty", ""),
    ("", r"parallel -k printf '<%s>\n' :::: nasty", ""),
    (
        "E",
        r"parallel -k echo :::: no-such-file; echo status $?",
        "",
    ),
    (
        "D:a directory as an input file: GNU reads no values from it and succeeds; frun refuses it (255)",
        r"parallel -k echo :::: dir; echo status $?",
        "",
    ),
    // --- Replacement strings.
    ("", r"parallel -k echo ::: A/B.C", ""),
    ("", r"parallel -k echo {} ::: A/B.C", ""),
    ("", r"parallel -k echo {.} ::: A/B.C", ""),
    ("", r"parallel -k echo {/} ::: A/B.C", ""),
    ("", r"parallel -k echo {//} ::: A/B.C", ""),
    ("", r"parallel -k echo {/.} ::: A/B.C", ""),
    ("", r"parallel -k echo {#} ::: A B C", ""),
    ("", r"parallel -k -j 2 'sleep 0.3; echo {%}' ::: A B", ""),
    (
        "",
        r"parallel -k -j 2 'sleep 0.{}; echo {#}:{%}' ::: 6 1 1 1",
        "",
    ),
    (
        "",
        r"for n in 1 4 5 7 8 9 10 12 13 20; do parallel -k -j2 -n4 -X echo ::: $(seq $n); done",
        "",
    ),
    ("", r"parallel -k -j3 -n4 -X echo {}. ::: $(seq 20)", ""),
    ("", r"parallel -k -j2 -n4 -m echo ::: $(seq 7)", ""),
    ("", r"seq 7 | parallel -k -j2 -n4 -X echo", ""),
    ("", r"parallel -k -X echo {1} ::: a b c", ""),
    ("", r"parallel -k -j1 -X echo {2}x {-1} ::: a b c", ""),
    ("", r"parallel -k -j1 -X echo {1} x{}y {1}:{} ::: a b c", ""),
    ("", r"parallel -k -j1 -m echo {1} {} {3} ::: a b c", ""),
    ("", r"parallel -k -j1 -X echo {1.} {1} :::: abc-file", ""),
    ("", r"seq 5 | parallel -k -j2 -X echo {1}-{-1}", ""),
    (
        "",
        r"seq 100000 | parallel -k -j2 -n 1000 -X echo | awk '{print NF}' | uniq -c",
        "",
    ),
    ("", r"parallel -k -j 1 echo {%} ::: A B C", ""),
    ("", r"parallel -k -I ,, echo ,, ::: A/B.C", ""),
    (
        "",
        r"parallel -k --extensionreplace ,, echo ,, ::: A/B.C",
        "",
    ),
    (
        "",
        r"parallel -k --basenamereplace ,, echo ,, ::: A/B.C",
        "",
    ),
    ("", r"parallel -k --dirnamereplace ,, echo ,, ::: A/B.C", ""),
    (
        "",
        r"parallel -k --basenameextensionreplace ,, echo ,, ::: A/B.C",
        "",
    ),
    ("", r"parallel -k --seqreplace ,, echo ,, ::: A B C", ""),
    (
        "",
        r"parallel -k -j1 --slotreplace ,, echo ,, ::: A B C",
        "",
    ),
    (
        "",
        r"parallel -k --er ,, --bnr ,b --dnr ,d --bner ,e echo ,, ,b ,d ,e ::: x/y.z",
        "",
    ),
    ("", r"parallel -k -I XX echo XX {} ::: a", ""),
    ("", r"parallel -k -I '{a}' echo '{a}' {} ::: a", ""),
    // A positional form exists only while its own string keeps its name: -I leaves {1} text
    // ({1.} stays), --er leaves {1.} text.
    (
        "",
        r"parallel -k -I ,, echo {1} {1.} {-1} {1/} ,, ::: a.b ::: c",
        "",
    ),
    ("", r"parallel -k --er XX echo {1.} {1} XX ::: a.b", ""),
    ("", r"parallel -k echo {1} and {2} ::: A B ::: C D", ""),
    (
        "",
        r"parallel -k echo /={1/} //={1//} /.={1/.} .={1.} ::: A/B.C D/E.F",
        "",
    ),
    (
        "",
        r"parallel -k echo 1={1} 2={2} 3={3} -1={-1} -2={-2} -3={-3} ::: A B ::: C D ::: E F",
        "",
    ),
    ("", r"parallel -k echo {2} {1} ::: a b ::: c d", ""),
    ("", r"parallel -k echo {} ::: a b ::: c d", ""),
    ("", r"parallel -k echo ::: a b ::: c d", ""),
    ("", r"parallel -k echo {4} ::: a ::: b", ""),
    ("", r"parallel -k echo x{}y{}z ::: 1 2", ""),
    ("", r"parallel -k echo {}{} ::: a", ""),
    ("", r"parallel -k echo '{}' ::: a", ""),
    ("", r"parallel -k echo {} {#} ::: a b c", ""),
    ("", r"parallel -k echo {#} ::: a b c", ""),
    ("", r"parallel -k echo {.} {/} {//} {/.} ::: /a/b.c.d", ""),
    ("", r"parallel -k echo {.} {/} {//} {/.} ::: .bashrc", ""),
    ("", r"parallel -k echo {.} {/} {//} {/.} ::: dir.x/file", ""),
    ("", r"parallel -k echo {.} {/} {//} {/.} ::: a/b/", ""),
    ("", r"parallel -k echo {.} {/} {//} {/.} ::: /", ""),
    ("", r"parallel -k echo {.} {/} {//} {/.} ::: x.", ""),
    ("", r"parallel -k echo {.} {/} {//} {/.} ::: ''", ""),
    ("", r"parallel -k echo {//} ::: a//b /a a/", ""),
    (
        "",
        r"parallel -k echo {1.} {1/} {2//} {2/.} ::: a/b.c ::: d/e.f",
        "",
    ),
    ("", r"parallel -k echo {-1/} ::: a/b ::: c/d", ""),
    ("", r"parallel -k echo '{ }' {a} '{}x' ::: v", ""),
    ("", r"parallel -k echo {} ::: '{}' '{.}'", ""),
    ("", r"parallel -k echo pre-{}-post ::: A", ""),
    ("", r"parallel -k echo \={} ::: zsh bash ls", ""),
    (
        "",
        r"parallel -k convert -geometry 120 {} {.}_thumb.jpg ::: a.jpg b.jpg 2>/dev/null; echo $?",
        "",
    ),
    (
        "",
        r"convert() { echo convert $@; }; export -f convert; parallel -k convert -geometry 120 {} {.}_thumb.jpg ::: a.jpg b.jpg",
        "",
    ),
    (
        "",
        r"lame() { echo lame $@; }; export -f lame; parallel -k lame {} -o {.}.mp3 ::: x.wav y.wav",
        "",
    ),
    (
        "",
        r"parallel -k echo lame {} -o mydir/{/.}.mp3 ::: sounddir/a.wav",
        "",
    ),
    // --- Quoting of values.
    ("", r"parallel -k echo ::: 'a b' 'a  b' ' a' 'b '", ""),
    (
        "",
        r#"parallel -k echo ::: "it's" 'say "hi"' 'back\slash' '$HOME' '`date`' '$(date)'"#,
        "",
    ),
    (
        "",
        r"parallel -k echo ::: '*' '?' '[a]' '~' '~root' '#x' 'a#b' '!' '!!'",
        "",
    ),
    (
        "",
        r"parallel -k echo ::: ';' '&' '|' '>' '<' '(' ')' '{' '}' '&&' '||'",
        "",
    ),
    ("", r"parallel -k echo ::: '' x ''", ""),
    ("", r"parallel -k echo [{}] ::: ''", ""),
    ("", r"parallel -k printf '<%s>\n' ::: '' a ''", ""),
    ("", r"parallel -k printf '<%s>\n' {} ::: 'a b' ''", ""),
    (
        "",
        r#"parallel -k 'printf "<%s>\n" {}' ::: 'a b' '' \$x"#,
        "",
    ),
    ("", r"parallel -k echo ::: é ü 日本 'ça va'", ""),
    ("", r"parallel -k echo {.} ::: 日本.txt", ""),
    ("", r"parallel -k echo ::: $'tab\there' $'cr\rhere'", ""),
    ("", r"parallel -k echo ::: $'a\nb' c", ""),
    (
        "",
        r"printf 'a\nb\0c\0' | parallel -k -0 printf '<%s>\n'",
        "",
    ),
    (
        "",
        r"printf 'a\nb\0c\0' | parallel -k -0 'printf \<%s\>\\n {}'",
        "",
    ),
    ("", r"printf 'x y\0' | parallel -k -0 'echo {} | wc -w'", ""),
    ("", r"parallel -k echo ::: -n -e -E x", ""),
    ("", r"parallel -k echo {} ::: -n x", ""),
    ("", r"parallel -k printf '%s\n' ::: -- --x", ""),
    ("", r"parallel -k echo ::: a=b 'a b=c'", ""),
    ("", r"parallel -k 'x={}; echo $x' ::: 'a b' 'c;d'", ""),
    ("", r"parallel -k echo \'{}\' ::: a", ""),
    ("", r#"parallel -k "echo 'a{}b'" ::: 1 'x y'"#, ""),
    ("", r#"parallel -k 'echo "{}"' ::: 'x y' 'q"q'"#, ""),
    ("", r"echo 1,2,3 | parallel -kd, echo a{}b", ""),
    ("", r#"echo 1,2,3 | parallel -kd, "echo 'a{}b'""#, ""),
    ("", r#"echo 1,2,3 | parallel -kd, "echo 'a'{}'b'""#, ""),
    ("", r#"echo 1,2,3 | parallel -kd, "echo 'a'"{}"'b'""#, ""),
    ("", r"parallel -k echo ::: \\ '\\' '\n'", ""),
    ("", r"parallel -k echo {} ::: $'\x01ctl'", ""),
    ("", r"parallel -k 'echo {}' ::: \\\\", ""),
    ("", r"parallel -k echo ::: $(printf 'x%.0s ' $(seq 50))", ""),
    (
        "",
        r#"parallel -k echo :::: <(printf '%s\n' \" \' \\ \$)"#,
        "",
    ),
    ("", r"VAR=val; echo test | parallel echo {} $VAR", ""),
    (
        "",
        r#"VAR="two  spaces"; echo test | parallel echo {} \'"$VAR"\'"#,
        "",
    ),
    (
        "",
        r"echo test | parallel VAR=this_is_set_after_starting \; echo {} \$VAR",
        "",
    ),
    (
        "",
        r#"echo test | parallel VAR='"two  spaces  between  each  word"' echo {} \'"\$VAR"\'"#,
        "",
    ),
    ("", r"echo test | VAR=outer parallel echo {} \\\$VAR", ""),
    ("", r"echo test | VAR=outer parallel -q echo {} \$VAR", ""),
    (
        "",
        r"VAR=outer; export VAR; echo test | parallel echo {} \$VAR",
        "",
    ),
    ("", r"VAR='!'; parallel -q echo $VAR ::: '!'", ""),
    (
        "",
        r#"export VAR='a b'; parallel echo '"$VAR"' ::: '!'"#,
        "",
    ),
    ("", r#"VAR='a b'; parallel echo "'$VAR'" ::: '!'"#, ""),
    (
        "",
        r#"myfunc() { echo "$@"; }; export -f myfunc; parallel -k myfunc ::: '!' 'a b'"#,
        "",
    ),
    ("", r"parallel -k echo ::: \{\} x", ""),
    // --- -q.
    (
        "",
        r#"parallel -k perl -e 'print "@ARGV\n"' ::: This wont work 2>/dev/null; echo $?"#,
        "",
    ),
    (
        "",
        r#"parallel -k -q perl -e 'print "@ARGV\n"' ::: This works"#,
        "",
    ),
    (
        "",
        r#"parallel -k perl -e \''print "@ARGV\n"'\' ::: This works, too"#,
        "",
    ),
    (
        "",
        r#"parallel -k perl\ -e\ \'print\ \"@ARGV\\n\"\' ::: This also works"#,
        "",
    ),
    ("", r"parallel -k -q printf '%s|%s\n' {} 'a b' ::: x y", ""),
    ("", r"parallel -k -q echo 'a  b' ::: x", ""),
    (
        "",
        r#"parallel -k -q sh -c 'echo "$0 $1"' {} 'x y' ::: a"#,
        "",
    ),
    ("", r"parallel -kq echo '$HOME' {} ::: '$x'", ""),
    ("", r"parallel -kq echo a{}b 'c{}d' ::: 'v w'", ""),
    (
        "E",
        r#"parallel -k -q "zcat {} >{.}" ::: h1.gz; echo $?; ls"#,
        "",
    ),
    (
        "",
        r"parallel -k -q bash -c 'wc -c <(echo {})' ::: ab abc",
        "",
    ),
    (
        "",
        r#"ls | parallel -k -q perl -ne '/^\S+\s+\S+$/ and print $ARGV,"\n"'"#,
        "",
    ),
    (
        "",
        r#"ls *.log | parallel -k perl -ne \''/^\S+\s+\S+$/ and print $ARGV,"\n"'\' "#,
        "",
    ),
    (
        "",
        r#"echo 'a b' > 'sp ace.log'; parallel -k -q perl -ne '/^\S+\s+\S+$/ and print $ARGV,"\n"' ::: 'sp ace.log' a.log"#,
        "",
    ),
    ("", r"parallel -k -q echo ';' '|' {} ::: x", ""),
    ("", r"parallel -k -q -X echo a{} ::: 1 2", ""),
    // --- Shell lines.
    ("", r"parallel -k 'echo {} | tr a-z A-Z' ::: a b", ""),
    (
        "",
        r"parallel -k 'test {} -gt 1 && echo big {}' ::: 1 2 3; echo $?",
        "",
    ),
    (
        "",
        r"parallel -k 'echo {} > out/{}.txt' ::: a b; cat out/a.txt out/b.txt",
        "",
    ),
    ("", r"parallel -k echo '$(echo {})' ::: x", ""),
    ("", r"parallel -k 'echo $(echo {} {})' ::: 'a  b'", ""),
    (
        "",
        r"parallel -k 'for i in 1 2; do echo {}$i; done' ::: a b",
        "",
    ),
    ("", r"parallel -k 'x={}; echo ${x^^}' ::: ab", ""),
    ("", r"parallel -k 'cd dir && ls' ::: 1", ""),
    ("", r"parallel -k echo {} '>' {}.out ::: a; cat a.out", ""),
    ("", r"parallel -k echo {} \> {}.out ::: a; cat a.out", ""),
    ("", r#"parallel zcat {} ">"{.} ::: *.gz; cat h1 h2"#, ""),
    ("", r#"parallel "zcat {} >{.}" ::: *.gz; cat h1 h2"#, ""),
    ("", r#"ls | parallel -k 'echo -n {}" "; ls {}|wc -l'"#, ""),
    (
        "",
        r#"ls -d dir destdir | parallel '(echo -n {}" "; ls {}|wc -l) >{}.dir'; cat dir.dir destdir.dir"#,
        "",
    ),
    (
        "",
        r#"ls | parallel -k 'a={}; name=${a##*/}; echo $name'"#,
        "",
    ),
    (
        "",
        r#"ls | parallel 'mv {} "$(echo {} | tr "[:upper:]" "[:lower:]")"'; ls"#,
        "",
    ),
    (
        "",
        r"printf 'a.log\nnope\nc.txt\n' | parallel -k 'if [ ! -e {} ] ; then echo {}; fi'",
        "",
    ),
    (
        "",
        r#"parallel -k [ -f {1}:{2} ] "||" echo {1}:{2} does not exist ::: a b ::: 1 2"#,
        "",
    ),
    (
        "",
        r#"parallel "zcat {} | bzip2 >{.}.bz2 && rm {}" ::: *.gz; ls"#,
        "",
    ),
    (
        "",
        r"parallel 'mkdir {.}; cd {.}; touch made' ::: p.zip q.zip; ls p q",
        "",
    ),
    (
        "",
        r"parallel -k '{} | tr a-z A-Z' ::: 'echo command 1' 'echo command 2'",
        "",
    ),
    // A job's stderr is held and printed right after its stdout, tagged as it is.
    (
        "",
        r"parallel -k 'echo a{}; sleep 0.{}; echo b{} >&2' ::: 3 1 2>&1",
        "",
    ),
    (
        "",
        r"parallel -k 'echo a{}; echo b{} >&2; echo c{}' ::: 1 2 3 2>&1",
        "",
    ),
    (
        "",
        r"parallel -j1 --tag 'echo a{}; echo b{} >&2' ::: 1 2 2>&1",
        "",
    ),
    ("e", r"parallel -k 'echo e{} >&2' ::: 1 2 3", ""),
    (
        "",
        r"parallel -k --retries 2 'echo a; echo e >&2; false' ::: 1 2>&1",
        "",
    ),
    (
        "",
        r"parallel -j1 -u 'echo a{}; echo b{} >&2' ::: 1 2 2>&1",
        "",
    ),
    ("", r"parallel -k echo a '&&' echo {} ::: b", ""),
    ("", r"parallel -k echo a \&\& echo {} ::: b", ""),
    ("", r"parallel -k 'echo {}; false' ::: a b; echo $?", ""),
    ("", r"parallel -k 'read x; echo got $x' ::: a", "hello\n"),
    ("", r"parallel -k cat ::: abc-file def-file", ""),
    ("", r"parallel -k wc -l ::: abc-file num10", ""),
    ("", r"parallel -k 'cat {} | wc -l' ::: abc-file num10", ""),
    ("", r"parallel -k echo {} '|' rev ::: abc", ""),
    ("", r"parallel -k echo {} \| rev ::: abc", ""),
    ("", r"parallel -k 'echo {}' ::: 'a;b'", ""),
    (
        "",
        r"parallel -k 'case {} in a*) echo A;; *) echo other;; esac' ::: ab x",
        "",
    ),
    ("", r"parallel -k 'echo $((1 + {}))' ::: 1 2", ""),
    ("", r"parallel -k 'echo {} {} {}' ::: x", ""),
    ("", r"parallel -k eval 'echo {}; echo again' ::: 1", ""),
    ("", r"parallel -k 'printf %s\\n {.}' ::: a.b", ""),
    ("", r"parallel -k 'echo {}' ::: '$PATH'", ""),
    ("", r"parallel -k echo '{} # not a comment' ::: a", ""),
    ("", r"parallel -k echo '#' {} ::: a", ""),
    ("", r"parallel -k 'time=1; echo $time {}' ::: a", ""),
    ("", r"parallel -k echo ::: a 2>&1 | cat", ""),
    ("", r"parallel -k 'echo {1}{2}' ::: a ::: 'b c'", ""),
    ("", r"parallel -k echo '${HOME:+set}' ::: a", ""),
    ("", r"HOME=/h parallel -k echo '~' '~/x' ::: a", ""),
    ("", r"parallel -k echo '*.log' ::: a", ""),
    ("", r"parallel -k echo *.log ::: a", ""),
    ("", r"parallel -k 'echo *.log {}' ::: a", ""),
    ("", r"parallel -k 'ls {}' ::: '*.log'", ""),
    ("", r"parallel -k ls ::: '*.log' 2>/dev/null; echo $?", ""),
    ("", r"parallel -k 'echo \$0' ::: a", ""),
    ("", r"parallel -k 'echo {}' ::: 'a\nb'", ""),
    ("", r"parallel -k cd ::: dir; echo $?", ""),
    ("", r"parallel -k echo cd ::: dir", ""),
    ("", r"parallel -k type ::: echo", ""),
    ("", r"parallel -k command -v ::: echo", ""),
    ("", r"parallel -k if ::: x 2>/dev/null; echo $?", ""),
    ("", r"parallel -k ! true ::: x; echo $?", ""),
    ("", r"parallel -k env X={} sh -c 'echo \$X' ::: 1", ""),
    ("", r"parallel -k X={} sh -c 'echo \$X' ::: 1", ""),
    (
        "",
        r"parallel -k 'echo start; sleep 0.{}; echo end {}' ::: 2 1",
        "",
    ),
    // --- Exit statuses, failing and missing commands.
    ("", r"parallel exit ::: 1 2 3 0; echo $?", ""),
    ("", r"parallel 'exit {}' ::: 0 0 0; echo $?", ""),
    ("", r"parallel exit ::: 255; echo $?", ""),
    ("", r"parallel exit ::: 1 255 7; echo $?", ""),
    ("", r"parallel -j8 false ::: $(seq 150); echo $?", ""),
    ("", r"parallel -j8 false ::: $(seq 100); echo $?", ""),
    ("", r"parallel -j8 false ::: $(seq 101); echo $?", ""),
    ("", r"parallel -j8 'exit {}' ::: $(seq 0 120); echo $?", ""),
    (
        "",
        r"parallel -k 'echo {}; exit {}' ::: 0 1 2 3; echo $?",
        "",
    ),
    ("", r"parallel true ::: a b; echo $?", ""),
    ("", r"parallel false ::: a; echo $?", ""),
    ("e", r"parallel -k nosuch ::: 1 2 3; echo $?", ""),
    ("e", r"parallel -k nosuch {} arg ::: 1; echo $?", ""),
    ("e", r"parallel -k 'nosuch {} | cat' ::: 1; echo $?", ""),
    ("e", r"parallel -k ./no-such-script ::: 1; echo $?", ""),
    ("e", r"parallel -k ::: nosuch 'echo ok'; echo $?", ""),
    ("E", r"parallel -k ./abc-file ::: 1; echo $?", ""),
    ("E", r"parallel -k dir ::: 1; echo $?", ""),
    ("E", r"parallel 'kill -9 $$' ::: 1; echo $?", ""),
    ("E", r"parallel 'kill -TERM $$' ::: 1 2; echo $?", ""),
    ("", r"parallel -k 'test {} = b' ::: a b c; echo $?", ""),
    (
        "",
        r"parallel -k grep -q A ::: abc-file def-file; echo $?",
        "",
    ),
    (
        "",
        r"my_fail() { return $1; }; export -f my_fail; parallel my_fail ::: 0 3 0 4; echo $?",
        "",
    ),
    ("", r"parallel -k 'exit {}' ::: 256 257; echo $?", ""),
    ("", r"parallel -X false ::: 1 2 3 4 5 6; echo $?", ""),
    ("", r"parallel -j1 -X false ::: 1 2 3 4 5 6; echo $?", ""),
    ("", r"parallel -k -N2 false ::: 1 2 3 4 5; echo $?", ""),
    // --- -N / -n.
    ("", r"parallel -k -N3 echo ::: A B C D E F G H", ""),
    (
        "",
        r"parallel -k -N3 echo 1={1} 2={2} 3={3} ::: A B C D E F G H",
        "",
    ),
    ("", r"parallel -k -N0 echo foo ::: 1 2 3", ""),
    ("", r"seq 10 | parallel -k -N2 echo arg1:{1} arg2:{2}", ""),
    ("", r"parallel -k -N2 echo {1}+{2} ::: 1 2 3 4 5", ""),
    ("", r"parallel -k -n2 echo ::: 1 2 3", ""),
    ("", r"parallel -k -n2 echo {} ::: 1 2 3", ""),
    ("", r"parallel -k -n 2 echo {1} ::: 1 2 3", ""),
    ("", r"parallel -k -N2 echo {} ::: 1 2 3", ""),
    ("", r"parallel -k -N2 echo {2} {1} ::: a b c d", ""),
    ("", r"parallel -k -N3 echo {-1} ::: a b c d e", ""),
    ("", r"parallel -k -N2 echo {#} {1} ::: a b c", ""),
    ("", r"parallel -k -N2 echo {1.} {2/} ::: a/b.c d/e.f", ""),
    ("", r"parallel -k -N2 'echo {1}; echo {2}' ::: 'a b' c", ""),
    (
        "",
        r"parallel -k -N2 printf '<%s>' {} ::: 'a b' c d; echo",
        "",
    ),
    ("", r"parallel -k -N1 echo ::: a b", ""),
    ("", r"parallel -k -N5 echo ::: a b", ""),
    (
        "",
        r"tr ':' '\n' < passwd | parallel -k -N7 echo {1} {6}",
        "",
    ),
    (
        "",
        r"ls *.es.* | perl -pe 'print; s/\.es//' | parallel -k -N2 cp {1} {2}; ls *.txt",
        "",
    ),
    // -N with several input sources: {n} numbers the job's values one after the other.
    ("", r"parallel -k -N2 echo {1} {2} ::: a b ::: c d", ""),
    ("", r"parallel -k -n3 echo ::: $(seq 10)", ""),
    ("", r"parallel -k --max-args 2 echo ::: 1 2 3", ""),
    (
        "",
        r"parallel -k --max-replace-args 2 echo {2} ::: 1 2 3",
        "",
    ),
    // --- -X / -m.
    (
        "",
        r"parallel -k --jobs 4 -m echo ::: 1 2 3 4 5 6 7 8 9 10",
        "",
    ),
    (
        "",
        r"parallel -k --jobs 4 -m echo pre-{}-post ::: A B C D E F G",
        "",
    ),
    (
        "",
        r"parallel -k --jobs 4 -X echo pre-{}-post ::: A B C D E F G",
        "",
    ),
    ("", r"cat num30000 | parallel --jobs 4 -m echo | wc -l", ""),
    (
        "",
        r"cat num30000 | parallel -k --jobs 4 -m echo | md5sum",
        "",
    ),
    ("", r"cat num30000 | parallel -k -X echo | md5sum", ""),
    // Lines filled to GNU's length (63664 bytes, or -s), the rest spread over the slots once
    // it fits in one line; -n caps a line; values quoted and context repeated count.
    (
        "",
        r"seq 30000 | parallel -k -j4 -m echo | awk '{print NF}'",
        "",
    ),
    (
        "",
        r"seq 100000 | parallel -k -j3 -X echo | awk '{print NF, length}'",
        "",
    ),
    (
        "",
        r"seq 100000 | parallel -k -j2 -X echo a{}b{.}c | md5sum",
        "",
    ),
    ("", r"seq 150 | parallel -k -j3 -s 100 -X echo", ""),
    ("", r"seq 65 | parallel -k -j3 -s 100 -X echo", ""),
    ("", r"seq 66 | parallel -k -j3 --max-chars 100 -X echo", ""),
    // A tag's replacement strings the command lacks count as GNU Parallel counts them (the
    // values once more: without spaces with -X, with them with -m); -q counts a line 3 times.
    (
        "",
        r"parallel -k -X -s 30 --tag echo ::: aaaa bbbb cccc dddd eeee ffff gggg",
        "",
    ),
    (
        "",
        r"parallel -k -X -s 30 --tag echo {} ::: aaaa bbbb cccc dddd eeee ffff gggg",
        "",
    ),
    (
        "",
        r"parallel -k -m -s 30 --tag echo ::: aaaa bbbb cccc dddd eeee ffff gggg",
        "",
    ),
    (
        "",
        r"parallel -k -X -s 40 --tagstring '{.}' echo {} ::: a.aa b.bb c.cc d.dd e.ee f.ff",
        "",
    ),
    (
        "",
        r"parallel -k -j2 -X --tag echo ::: $(seq 30000) | md5sum",
        "",
    ),
    (
        "",
        r"parallel -k -j2 -m --tag echo ::: $(seq 30000) | md5sum",
        "",
    ),
    (
        "",
        r"parallel -k -X -s 30 -q echo ::: aaaa bbbb cccc dddd eeee ffff gggg",
        "",
    ),
    (
        "",
        r"parallel -k -j2 -X -q echo ::: $(seq 30000) | md5sum",
        "",
    ),
    (
        "",
        r"parallel -q echo ::: $(head -c 30000 /dev/zero | tr '\0' a) 2>&1 | cut -c1-60",
        "",
    ),
    // A line that cannot be shrunk below -s: GNU Parallel's error, status 255.
    ("", r"parallel -X -s 10 echo ::: 123456789 1", ""),
    ("", r"printf '%050d\n' 1 | parallel -m -s 40 echo", ""),
    ("", r"seq 100 | parallel -k -j1 -s 100 -X echo x{}y {}", ""),
    ("", r"seq 100 | parallel -k -j4 -s 100 -m echo x{}y", ""),
    (
        "",
        r"yes 'a b' | head -100 | parallel -k -j1 -s 100 -X echo",
        "",
    ),
    ("", r"seq 12 | parallel -k -j2 -n4 -X echo", ""),
    ("", r"seq 8 | parallel -k -j2 -n4 -m echo", ""),
    (
        "",
        r"seq 3000 | parallel -k -Xj1 'echo {} {} {} {} | wc'",
        "",
    ),
    ("", r"seq 92 | parallel -k -j0 -X -s 100 echo", ""),
    (
        "",
        r"seq 15 | parallel -k -j1 -s 80 -X echo a{}b{.}c{.}",
        "",
    ),
    ("", r"parallel -k --xapply echo ::: a b ::: 1 2", ""),
    (
        "",
        r"parallel -k --show-limits echo ::: a; parallel -k -s 100 --show-limits echo ::: b",
        "",
    ),
    ("e", r"parallel -k -s 100000 -X echo ::: a b", ""),
    // -L/-l/--max-lines: lines per job, a line ending in a blank going on with the next.
    (
        "",
        r"parallel -k -L1 printf '<%s>' ; echo",
        "a b\nc d \ne\nf g\n",
    ),
    ("", r"parallel -k -L2 echo '{1}={2}'", "a b\nc d \ne\nf g\n"),
    ("", r"parallel -k -L2 -X echo 'x{}y'", "a b\nc d \ne\nf g\n"),
    ("", r"parallel -k -L2 -m echo 'x{}y'", "a b\nc d \ne\nf g\n"),
    ("", r"seq 19 | parallel -k -L 10 echo a{}b", ""),
    ("", r"seq 19 | parallel -k -N 10 echo a{}b", ""),
    ("", r"parallel -kr -L2 echo ::: foo '' 'ole ' bar quux", ""),
    (
        "",
        r"parallel -kr -L2 -E bar echo",
        "foo\n\nole \nbar\nquux\n",
    ),
    ("", r"parallel -k --max-lines 3 echo", "> \n> \n>\n"),
    ("", r"parallel -k --max-lines=2 echo", "a \nb\nc\nd\n"),
    ("", r"seq 5 | parallel -k -l echo {} OK", ""),
    ("", r"seq 3 | parallel -k -l0 echo l0", ""),
    ("", r"seq 3 | parallel -k -l 2 echo", ""),
    (
        "",
        r"printf '1\0002\0003\000' | parallel -k -0 -L -0 echo {} OK",
        "",
    ),
    ("", r"seq 2 | parallel -k -L0 echo L0", ""),
    ("", r"seq 2 | parallel -k -n0 echo n0", ""),
    ("", r"parallel -k -j1 -X echo ::: $(seq 10)", ""),
    ("", r"parallel -k -j2 -X echo ::: $(seq 10)", ""),
    ("", r"parallel -k -j3 -X echo ::: $(seq 10)", ""),
    ("", r"parallel -k -j4 -X echo ::: $(seq 10)", ""),
    ("", r"parallel -k -j1 -m echo ::: $(seq 10)", ""),
    ("", r"parallel -k -j2 -m echo ::: $(seq 10)", ""),
    ("", r"parallel -k -j3 -m echo ::: $(seq 10)", ""),
    ("", r"parallel -k -j4 -m echo ::: $(seq 10)", ""),
    ("", r"parallel -k -j3 -X echo x{}y ::: $(seq 10)", ""),
    ("", r"parallel -k -j3 -m echo x{}y ::: $(seq 10)", ""),
    ("", r"parallel -k -j2 -X echo a{}b {} ::: 1 2 3", ""),
    ("", r"parallel -k -j2 -m echo a{}b {} ::: 1 2 3", ""),
    ("", r"parallel -k -j1 -X echo {#} {} ::: 1 2 3", ""),
    ("", r"parallel -k -j4 -X echo ::: 1 2", ""),
    ("", r"parallel -k -j2 -X echo {1}-{2} ::: a b ::: 1 2", ""),
    (
        "",
        r"parallel -k -j2 -X echo {1}-{2} x{}y ::: a b ::: c d",
        "",
    ),
    (
        "",
        r"parallel -k -j1 -X echo {2}/{.} ::: a.x b.y ::: c.z",
        "",
    ),
    (
        "",
        r"parallel -k -j2 -X echo {}-{.} ::: a b c ::: d e f",
        "",
    ),
    // -E ending a source at its first value leaves one empty value beside the others.
    ("", r"parallel -k -E 3 echo ::: 1 2 ::: 3 4 ::: 5", ""),
    ("", r"parallel -k -E 3 echo ::: 3 4 ::: 3 5", ""),
    ("", r"parallel -k -j1 -X echo {.} ::: a.x b.y", ""),
    ("", r"parallel -k -j1 -m echo {.} ::: a.x b.y", ""),
    ("", r"parallel -k -j1 -X 'echo {}' ::: 'a b' c", ""),
    ("", r"parallel -k -j1 -m 'echo {}' ::: 'a b' c", ""),
    (
        "",
        r"parallel -k -j1 -X printf '<%s>' ::: 'a b' '' c; echo",
        "",
    ),
    (
        "",
        r"parallel -k -j1 -m printf '<%s>' {} ::: 'a b' c; echo",
        "",
    ),
    ("", r"parallel -k -X -N2 echo ::: 1 2 3 4 5", ""),
    ("", r"parallel -k -m -n2 echo ::: 1 2 3 4 5", ""),
    ("", r"parallel -k -j1 -X -n3 echo x{} ::: 1 2 3 4 5", ""),
    ("", r"seq 30 | parallel -k -j3 -X echo", ""),
    ("", r"seq -w 0 99 | parallel -k -j2 -X echo pict{}.jpg", ""),
    (
        "",
        r"seq -w 0 9 | parallel touch pict{}.jpg; seq -w 0 9 | parallel -X rm pict{}.jpg; ls",
        "",
    ),
    (
        "",
        r"seq -w 0 9 | perl -pe 's/(.*)/pict$1.jpg/' | parallel -X touch; ls pict*",
        "",
    ),
    (
        "",
        r"ls | grep -E '\.log$' | parallel -m mv {} destdir; ls destdir",
        "",
    ),
    (
        "",
        r"printf '%s\0' *.log | parallel -0 -m mv {} destdir; ls destdir",
        "",
    ),
    (
        "",
        r"ls | grep -E '\.log$' | parallel mv {} destdir; ls destdir",
        "",
    ),
    (
        "",
        r"find dir -type f | parallel -k -m grep -c x {} /dev/null",
        "",
    ),
    ("", r"parallel -k -X echo ::: ", ""),
    ("", r"parallel -k -m echo {} {} ::: a b", ""),
    ("", r"parallel -k -j2 -m echo {#} ::: a b c d", ""),
    // --- --colsep, --header, --trim.
    (
        "",
        r"parallel -k --colsep '\t' echo 1={1} 2={2} :::: tsv-file.tsv",
        "",
    ),
    (
        "",
        r"parallel -k --colsep '-' echo {4} {3} {2} {1} :::: dashes",
        "",
    ),
    ("", r"parallel -k --colsep '-' echo {} :::: dashes", ""),
    // A separator that matches nothing wide: Perl's split (no empty first column).
    ("", r"parallel -k --colsep '' echo {1}-{2}-{3}. ::: ab", ""),
    ("", r"parallel -k --colsep '' echo :::: dashes", ""),
    ("", r"parallel -k --colsep 'b*' echo ::: abba", ""),
    ("", r"parallel -k --colsep , echo {1}.{2}.{3} ::: ,a,", ""),
    ("", r"parallel -k --colsep '-' echo :::: dashes", ""),
    ("", r"parallel -k --colsep - echo {-1} {1.} :::: dashes", ""),
    (
        "",
        r"parallel -k -a tsv-file.tsv --colsep '\t' echo -o {2} -i {1}",
        "",
    ),
    (
        "",
        r"parallel -k -a tsv-file.tsv --trim n --colsep '\t' echo -o {2} -i {1}",
        "",
    ),
    ("", r"cat dashes | parallel -k --colsep - echo {3}", ""),
    (
        "",
        r"printf 'a  b\n' | parallel -k --colsep ' +' echo {2}",
        "",
    ),
    (
        "",
        r"printf 'a1b22c\n' | parallel -k -C '[0-9]+' echo {1}{2}{3}",
        "",
    ),
    // The separator matches bytes, as Perl does on undecoded input: `\w`, `.` and `(?i)` see
    // one byte at a time, a `\x` escape is a byte, a literal é is its two bytes.
    (
        "",
        r"printf 'x\303\251y\n' | parallel -k --colsep '\w' echo '[{2}]'",
        "",
    ),
    (
        "",
        r"printf 'a\303\251b\n' | parallel -k --colsep 'a.' echo '[{2}]' | od -An -c",
        "",
    ),
    (
        "",
        r"printf 'a\303\251b\n' | parallel -k --colsep '\xc3' echo '[{1}][{2}]' | od -An -c",
        "",
    ),
    (
        "",
        r"printf 'x\303\251Xy\n' | parallel -k --colsep '(?i)x' echo '[{2}][{3}]'",
        "",
    ),
    (
        "",
        r"printf 'a\303\251b\n' | parallel -k --colsep $'\303\251' echo '[{1}][{2}]'",
        "",
    ),
    (
        "",
        r"printf 'a,b\n' | parallel -k --colsep , 'echo {2}; echo {1}'",
        "",
    ),
    (
        "",
        r"printf 'a, b ,c\n' | parallel -k --colsep , echo '[{2}]'",
        "",
    ),
    (
        "",
        r"printf 'a, b ,c\n' | parallel -k --colsep , --trim lr echo '[{2}]'",
        "",
    ),
    (
        "",
        r"parallel -k --header : echo f1={f1} f2={f2} ::: f1 A B ::: f2 C D",
        "",
    ),
    (
        "",
        r"parallel -k --header : --colsep '\t' echo f1={f1} f2={f2} :::: hdr.tsv",
        "",
    ),
    (
        "",
        r"parallel -k --header : --colsep '\t' echo {1} {f2} :::: hdr.tsv",
        "",
    ),
    (
        "",
        r"parallel -k --header : echo {colour} {size} ::: colour red green ::: size S M",
        "",
    ),
    (
        "",
        r"parallel -k --header : echo x{X}y{Y} ::: X 1 2 ::: Y 3",
        "",
    ),
    ("", r"parallel -k --header : echo {} ::: X 1 2", ""),
    ("", r"parallel -k --header : echo {X.} ::: X a.b", ""),
    // Column names in --tagstring and with the other sources.
    (
        "",
        r"parallel -k --header : echo {name} {name.} {name/} {name//} {name/.} :::: <(printf 'name\nx.y/z.w\nq\n')",
        "",
    ),
    (
        "",
        r"parallel -k --header : --tag echo {f2} ::: f1 A B ::: f2 C D",
        "",
    ),
    (
        "",
        r"parallel -k --header : --tagstring '{f1}/{2}' echo {f2} ::: f1 A B ::: f2 C D",
        "",
    ),
    (
        "",
        r"cat hdr.tsv | parallel -k --header : --colsep '\t' echo {f2} {f1}",
        "",
    ),
    (
        "",
        r"parallel -k --header : --colsep '\t' -a hdr.tsv echo {f2} {f1}",
        "",
    ),
    (
        "",
        r"parallel -k --header : --colsep '\t' --tagstring {f1} echo {f2} :::: hdr.tsv",
        "",
    ),
    (
        "",
        r"parallel -k --header : --colsep '\t' --tag echo {f2} :::: hdr.tsv",
        "",
    ),
    (
        "",
        r"parallel -k --header : -q echo '{f1} x' ::: f1 'a b'",
        "",
    ),
    (
        "",
        r"parallel -k --header : --dry-run echo {f1} ::: f1 'a b'",
        "",
    ),
    ("", r"parallel -k --header : echo {f1} {nope} ::: f1 a", ""),
    ("", r"parallel -k --header : echo '{a b}' ::: 'a b' x", ""),
    (
        "",
        r"parallel -k --header : --tagstring '{#}-{f1.}' echo ::: f1 a.b",
        "",
    ),
    (
        "",
        r"parallel -k --header : --colsep , --tagstring '{y}' echo {x} ::: x,y 1,2 3,4",
        "",
    ),
    (
        "",
        r"parallel -k --header : --tagstring '[{f1}]' 'echo {f1} | tr a-z A-Z' ::: f1 ab",
        "",
    ),
    (
        "",
        r"parallel -k --header : --link echo {a}{b} ::: a 1 2 ::: b 3 4",
        "",
    ),
    (
        "",
        r"parallel -k --header : --tagstring '{b//}:{b/.}' echo {a} ::: a 1 :::+ b x/y.z",
        "",
    ),
    (
        "",
        r"parallel -k --header : echo x{X}y{Y}z{Z} \> x{X}y{Y}z{Z} ::: X 1 2 ::: Y 3 4 ::: Z 5 6; cat x1y3z5 x2y4z6",
        "",
    ),
    (
        "D:a column name with a space ({E-mail address}, from GNU's own man page): GNU 20221122 leaves it as it is; frun replaces it, as that man page says",
        r"printf 'Name\tE-mail address\nTom\tt@x\n' > addr.tsv; parallel -k --colsep '\t' --header : echo {Name} {E-mail address} :::: addr.tsv",
        "",
    ),
    ("", r"parallel -k --trim r echo pre-{}-post ::: ' A '", ""),
    ("", r"parallel -k --trim l echo pre-{}-post ::: ' A '", ""),
    ("", r"parallel -k --trim lr echo pre-{}-post ::: ' A '", ""),
    ("", r"parallel -k --trim rl echo pre-{}-post ::: ' A '", ""),
    ("", r"parallel -k --trim n echo pre-{}-post ::: ' A '", ""),
    ("e", r"parallel --trim fj echo ::: a", ""),
    // --nonall (no --sshlogin): once, here, with no value; stdin is not read.
    (
        "",
        r"parallel -q --nonall perl -le 'print scalar @ARGV' 'a' 'b' ''",
        "",
    ),
    ("", r"parallel --nonall --tag echo hi {}", "x\n"),
    // -d of several bytes.
    (
        "",
        r"(seq 3; echo; seq 4) | parallel -k -d '\n\n' --tagstring {#} echo ABC';'echo",
        "",
    ),
    ("", r"parallel -k -d ab echo '[{}]'", "1ab2 3abab4"),
    // --header 0: a :::: source's column is named by its file (before a number or --plus).
    (
        "",
        r"parallel -k --header 0 echo {abc-file} {2} :::: abc-file ::: x y",
        "",
    ),
    (
        "",
        r"seq 2 > 1; parallel -k --header 0 echo {1} :::: def-file 1",
        "",
    ),
    (
        "",
        r"parallel -k --header 0 --plus echo {abc-file} :::: abc-file",
        "",
    ),
    // $Global::total_completed: the jobs completed so far, those of a resumed joblog too.
    (
        "e",
        r"parallel -j1 --joblog jl --halt now,fail=1 echo '{= $_=$Global::total_completed =};exit {}' ::: 0 0 1 0; parallel -j1 --joblog jl --resume echo '{= $_=$Global::total_completed =}' ::: 0 0 1 0 0",
        "",
    ),
    // --retries STR: each job's attempts from its values; a job out of retries is a failed
    // job, said nothing of.
    (
        "s",
        r"parallel --retries {//} 'echo {/} >> log; exit {/}' ::: 1/11 2/22 3/33; echo $?; cat log",
        "",
    ),
    (
        "e",
        r"parallel --retries 2 'echo {}; exit 1' ::: a; echo $?",
        "",
    ),
    // --pipe --header (lines, or a pattern matched at the start) goes before every block;
    // --skip-first-line drops the first line.
    (
        "",
        r"(echo h1; echo h2; seq 5) | parallel -j1 --pipe -N2 -k --header '.*\n.*\n' 'echo S; cat'",
        "",
    ),
    (
        "",
        r"seq 7 | parallel -k --pipe -N2 --header 2 --skip-first-line 'echo S; cat'",
        "",
    ),
    ("", r"seq 5 | parallel -k --pipe -N2 --header : cat", ""),
    (
        "",
        r"(echo x; echo H; seq 10) > f; parallel -k --skip-first-line --pipepart -a f --block 10 --header 1 cat",
        "",
    ),
    // --plus's {uniq} and {choose_k} skip jobs ({#} still counts them).
    (
        "",
        r"parallel -k --plus echo {#} {uniq} ::: A B C ::: A B C",
        "",
    ),
    (
        "",
        r"parallel -k --plus echo {1uniq}+{2uniq} ::: A B ::: A B",
        "",
    ),
    (
        "",
        r"parallel -k --plus echo {choose_k} ::: A B C ::: A B C",
        "",
    ),
    // --tmpl FILE=NAME: FILE filled in (perl too, several values joined) written to NAME before
    // each job; --cleanup removes it after.
    (
        "",
        r"printf 'x={x} all={} p={=x $_.=1 =} n={#}\n' > t; parallel -k --header : --tmpl t=o.{#} 'cat o.{#}' ::: x 1 2 ::: y a; ls o.*",
        "",
    ),
    (
        "",
        r"printf '{1}-{2}\n' > t; parallel -k -j1 --cleanup --tmpl t={1}.out 'cat {1}.out' ::: a b ::: c; ls *.out; echo $?",
        "",
    ),
    // {##}, {0#}, {0%} and total_jobs(): the input is read whole first.
    ("", r"parallel -k --plus echo {##} {0#} ::: {a..j}", ""),
    ("", r"seq 3 | parallel -k --plus echo {#}/{##}", ""),
    ("", r"parallel -k -N7 --plus echo {#} {##} ::: {1..15}", ""),
    // With lines filled by length, job 1 counts every value as a job, the later jobs one job
    // plus the values job 1 did not take (GNU Parallel's count).
    (
        "",
        r"parallel -k -S 8/: -X --plus echo {#} {##} ::: {1..15}",
        "",
    ),
    ("", r"seq 15 | parallel -j3 -k -X --plus echo {#} {##}", ""),
    (
        "",
        r"parallel -X --plus -j3 -k echo {#} {0#} {} ::: a b ::: 1 2 3 4 5",
        "",
    ),
    (
        "",
        r"seq 20 | parallel -j3 -k -m echo '{= $_=total_jobs() =}' {}",
        "",
    ),
    (
        "",
        r"parallel -k 'echo {= $::G++ > 1 and ($_=$Global::JobQueue->total_jobs());=}' ::: {1..4}",
        "",
    ),
    ("", r"parallel -k -j10 --plus echo {0%} ::: 1", ""),
    // Without --plus, {0#} and {0%} are not padded ({##} is not a replacement string then).
    ("", r"parallel -k -j10 echo {0%} ::: 1", ""),
    ("", r"seq 12 | parallel -k -j1 echo {0#} {##}", ""),
    ("", r"parallel -k --tagstring 'n{0#}' echo ::: a b", ""),
    // --semaphore: a counting semaphore by --id; --fg ends with the command's status, --wait
    // waits for the id's commands.
    (
        "",
        r"export PARALLEL_HOME=$PWD/ph; parallel --fg --semaphore --id c1 'echo x; exit 3'; echo $?",
        "",
    ),
    (
        "s",
        r"export PARALLEL_HOME=$PWD/ph; for i in 1 2 3; do parallel --semaphore --id c2 -j2 echo $i; done; parallel --semaphore --id c2 --wait; echo done",
        "",
    ),
    // `sem` is `parallel --semaphore`.
    (
        "",
        r"export PARALLEL_HOME=$PWD/ph; sem --fg --id c3 'echo y; exit 4'; echo $?; sem --id c3 -j1 'echo z'; sem --id c3 --wait; echo done",
        "",
    ),
    (
        "",
        r"printf ' x \n' | parallel -k --trim lr echo '[{}]'",
        "",
    ),
    ("", r"parallel -k --trim lr echo '[{}]' ::: $'\t a \t'", ""),
    // --- Ordering, output grouping, -j.
    (
        "",
        r"parallel -j4 -k sleep {}\; echo {} ::: 0.2 0.1 0.4 0.3",
        "",
    ),
    (
        "s",
        r"parallel -j4 sleep {}\; echo {} ::: 0.2 0.1 0.4 0.3",
        "",
    ),
    ("", r"parallel -j4 sleep {}\; echo {} ::: 0.3 0.1 0.5", ""),
    (
        "",
        r#"parallel -j2 -k 'printf "%s-start\n%s" {} {}; sleep {}; printf "%s\n" -middle; echo {}-end' ::: 0.3 0.2 0.1"#,
        "",
    ),
    (
        "s",
        r#"parallel -j2 'printf "%s-start\n%s" {} {}; sleep {}; printf "%s\n" -middle; echo {}-end' ::: 0.3 0.2 0.1"#,
        "",
    ),
    ("s", r"parallel -j2 -u 'echo {}' ::: a b c", ""),
    ("", r"parallel -j1 -u 'echo {}' ::: a b c", ""),
    ("", r"parallel --group -k echo ::: a b", ""),
    ("", r"parallel --keep-order echo ::: a b", ""),
    ("", r"parallel --ungroup -j1 echo ::: a b", ""),
    ("s", r"seq 20 | parallel echo", ""),
    ("s", r"seq 20 | parallel -j0 echo", ""),
    // --block with a fraction of a byte or of a unit: rounded down.
    ("", r"seq 5 | parallel --block 3.1 --pipe wc", ""),
    ("", r"seq 1000 | parallel -k --block 1.5k --pipe wc", ""),
    (
        "",
        r"seq 1000 | parallel -k --block 0.9995k --pipe wc -c",
        "",
    ),
    ("", r"seq 5 | parallel -j0 -k echo", ""),
    ("", r"seq 5 | parallel -j 200% -k echo", ""),
    ("", r"seq 5 | parallel -j 50% -k echo", ""),
    ("", r"seq 5 | parallel -j +1 -k echo", ""),
    ("", r"seq 5 | parallel -j -1 -k echo", ""),
    ("", r"seq 5 | parallel --jobs 3 -k echo", ""),
    ("", r"seq 5 | parallel -P 3 -k echo", ""),
    ("", r"seq 5 | parallel -kj3 echo", ""),
    ("", r"seq 5 | parallel --jobs=3 -k echo", ""),
    // Each job outlasts the start of the next, so two slots are in use whatever the load (with
    // jobs quicker than a start, GNU Parallel may run them all in slot 1).
    (
        "",
        r"seq 4 | parallel -j2 -k 'sleep 0.2; echo {%}' | sort -u",
        "",
    ),
    ("", r"seq 10 | parallel -k -j2 echo {#}", ""),
    ("s", r"parallel -j3 'sleep 0.3; echo {%}' ::: a b c", ""),
    (
        "",
        r"cat textfile 2>/dev/null | parallel -k echo {} append_string; seq 3 | parallel -k echo {} append_string",
        "",
    ),
    // --- --pipe.
    ("", r"seq 10 | parallel -k --pipe wc -l", ""),
    (
        "",
        r"seq 100000 | parallel -k --pipe --block 100k wc -l",
        "",
    ),
    ("", r"cat num1000 | parallel -k --pipe --block 1k wc", ""),
    (
        "",
        r"cat num30000 | parallel --pipe --block 20k wc -l | awk '{s+=$1} END {print s}'",
        "",
    ),
    ("", r"seq 5 | parallel -k --pipe 'cat; echo ---'", ""),
    ("", r"seq 5 | parallel --pipe -k --block 3 cat", ""),
    (
        "",
        r"seq 5 | parallel --pipe -k --block 3 'cat; echo ---'",
        "",
    ),
    ("", r"seq 20 | parallel --pipe -k --block 10 'wc -l'", ""),
    (
        "",
        r"printf 'a,b,c,d,' | parallel -k --pipe --recend , --block 2 'cat; echo'",
        "",
    ),
    (
        "",
        r"printf 'a,b,c,d' | parallel -k --pipe --recend , --block 3 'cat; echo'",
        "",
    ),
    ("", r"seq 10 | parallel -k --pipe -N3 'cat; echo --'", ""),
    ("", r"seq 10 | parallel -k --pipe -N4 wc -l", ""),
    ("e", r"seq -w 10 | parallel --pipe; echo $?", ""),
    ("e", r"parallel --pipepart -a num10; echo $?", ""),
    // --pipe -L N: records of N lines; an incomplete last record is a job of its own.
    ("", r"seq 10 | parallel -k --pipe -L 4 'cat; echo --'", ""),
    ("", r"seq 10 | parallel -k --pipe -l 4 'cat; echo --'", ""),
    (
        "",
        r"seq 10 | parallel -k --pipe -L 3 -N 2 'cat; echo --'",
        "",
    ),
    (
        "",
        r"printf '1
2
3
4
5' | parallel -k --pipe -L 2 'cat; echo'",
        "",
    ),
    ("", r"seq 2000 | parallel -k --pipe --block 1k -L 4 wc", ""),
    ("", r"seq 200 | parallel -k --pipe --block 30 -L 7 wc", ""),
    ("", r"seq 4 | parallel -k -j3 -N1 -L1 --pipe wc", ""),
    // --pipe --group-by COLUMN: runs of lines with one value in that column.
    (
        "",
        r"printf 'a,1\na,2\nb,3\nb,4\nc,5\nd,6\n' | parallel --pipe --colsep , --group-by 1 -k -N2 'cat;echo --'",
        "",
    ),
    (
        "",
        r"printf 'a\tb\na\tc\nb\tc\n' | parallel --pipe --group-by 1 -kN1 wc",
        "",
    ),
    (
        "",
        r"printf 'a,1\na,2\nb,3\nb,4\nc,5\nd,6' | parallel --pipe --colsep , --group-by 2 -k -N1 'cat;echo --'",
        "",
    ),
    (
        "",
        r"printf 'a  b\nc  d\nc d\n' | parallel --pipe --colsep ' ' --group-by 2 -k -N1 wc",
        "",
    ),
    ("", r"seq 3 | parallel -k --pipe -N1 echo JOB{#}\;cat", ""),
    (
        "",
        r"seq 10 | parallel -k --pipe --block 5 echo JOB{#}\;cat",
        "",
    ),
    (
        "D:--pipe -a FILE: GNU 20221122 passes nothing to the jobs (prints nothing); frun pipes FILE",
        r"parallel -k --pipe -a num10 wc -l",
        "",
    ),
    ("", r"parallel -k --pipe wc -l < /dev/null", ""),
    ("", r"printf 'no newline' | parallel -k --pipe cat", ""),
    ("", r"seq 5 | parallel -k --pipe --block 1M cat", ""),
    ("", r"seq 5 | parallel -k --spreadstdin cat", ""),
    ("", r"seq 3 | parallel -k --pipe 'exit 1'; echo $?", ""),
    (
        "",
        r"seq 1000 | parallel -k --pipe --block 100 'exit 2'; echo $?",
        "",
    ),
    (
        "D:--pipe -0 with a record longer than --block: both grow the block with GNU's warning, but GNU grows it once more and puts both records in one job; frun stops once the record fits",
        r"printf 'a\0b\0' | parallel -k --pipe -0 --block 1 'tr \\0 :; echo'",
        "",
    ),
    ("", r"seq 4 | parallel -k --pipe --block 2 sh", ""),
    (
        "",
        r"printf 'echo a\necho b\n' | parallel -k --pipe --block 10M sh",
        "",
    ),
    // --- --pipepart: GNU's block boundaries are its own; what is fixed is compared.
    (
        "",
        r"parallel --pipepart -a num30000 -k cat | cmp - num30000 && echo same",
        "",
    ),
    (
        "",
        r"parallel --pipe-part -a num30000 --block 10k wc -l | awk '{s+=$1} END {print s}'",
        "",
    ),
    (
        "",
        r"parallel --pipepart -a num30000 --block -3 -j2 wc -c | awk '{s+=$1} END {print s}'",
        "",
    ),
    (
        "",
        r"parallel --pipepart -a num30000 wc -l | awk '{s+=$1} END {print s}'",
        "",
    ),
    (
        "",
        r"parallel --pipepart -k cat :::: num1000 | cmp - num1000 && echo same",
        "",
    ),
    (
        "",
        r"touch empty; parallel --pipepart -a empty -k wc -l; echo $?",
        "",
    ),
    (
        "",
        r"printf 'a
b
c' > nonl; parallel --pipepart -a nonl -k cat | od -c",
        "",
    ),
    (
        "",
        r"printf 'a
b
c' > nonl; parallel --pipepart -a nonl -k wc -c | awk '{s+=$1} END {print s}'",
        "",
    ),
    (
        "",
        r"parallel --pipepart -a num1000 --block 5 --recend '0
' -k 'tail -n1'",
        "",
    ),
    (
        "",
        r"parallel --pipepart -a num30000 --block 1k --recend '' -k cat | cmp - num30000 && echo same",
        "",
    ),
    ("", r"parallel --pipepart -a num10 -N1 wc -l; echo $?", ""),
    // --pipepart ignores ::: values.
    (
        "",
        r"parallel --pipepart -a num10 -k 'echo {};wc -l' ::: a b",
        "",
    ),
    ("", r"parallel --pipepart -a /dev/null wc -l; echo $?", ""),
    ("", r"parallel --pipepart -a missing wc -l; echo $?", ""),
    // --pipepart cuts as GNU does: each block ends at the first record end past its size, so
    // the number of jobs and their contents are GNU's.
    ("", r"parallel -j2 -k --pipepart echo {#} :::: num1000", ""),
    (
        "",
        r"parallel -j2 -k --block -1 --pipepart echo {#} :::: num1000",
        "",
    ),
    (
        "",
        r"parallel -j2 -k --block -10 --pipepart echo {#} :::: num1000",
        "",
    ),
    (
        "",
        r"parallel -j2 -k --block 100 --pipepart -a num1000 md5sum",
        "",
    ),
    (
        "",
        r"parallel -j2 -k --block 7 --pipepart -a num1000 md5sum",
        "",
    ),
    (
        "",
        r"parallel -j2 -a num30000 --pipepart --block -0.01k -k md5sum",
        "",
    ),
    (
        "",
        r"parallel -j2 -k --pipepart -a num1000 --recend '5\n' --block 10 md5sum",
        "",
    ),
    // --round-robin --pipe: one command per job slot, fed the blocks in turn (which block
    // goes where depends on timing, for GNU Parallel too: totals are compared).
    (
        "",
        r"seq 1000000 | parallel -j4 -k --round-robin --pipe wc -l | awk '{s+=$1} END {print s, NR}'",
        "",
    ),
    ("", r"seq 10 | parallel -j4 --round-robin --pipe wc", ""),
    (
        "",
        r"seq 100000 | parallel -j3 -k --block 100k --round-robin --pipe 'echo {#}; wc -l >/dev/null'",
        "",
    ),
    (
        "",
        r"seq 10 | parallel -j3 -N2 --round-robin --pipe cat | sort -n | md5sum",
        "",
    ),
    // Each of the first -j batches starts a command of its own (one record each here).
    (
        "",
        r"seq 200 | parallel -j200 -k --round-robin --pipe -N1 'echo {#} $(wc -l)' | md5sum",
        "",
    ),
    (
        "",
        r"seq 100000 | parallel -j5 --block 10k --round-robin --pipe wc -l | awk '{s+=$1} END {print s, NR}'",
        "",
    ),
    // --round-robin --pipepart: one block per job slot, whatever --block says.
    (
        "s",
        r"parallel -j2 --pipepart -a num30000 --block 14 --round-robin wc",
        "",
    ),
    (
        "",
        r"parallel -j3 -k --pipepart -a num30000 --round-robin md5sum",
        "",
    ),
    // -r with --pipe: a block of blank lines starts no job.
    ("", r"echo | parallel -r -j2 -N1 --pipe cat | wc -l", ""),
    ("", r"printf ' \n\n' | parallel -r --pipe cat | wc -l", ""),
    (
        "",
        r"echo | parallel -r -j2 -N1 --pipe md5sum -c && echo OK",
        "",
    ),
    (
        "",
        r"printf 'a\n\nb\n' | parallel -k -r -N1 --pipe 'echo x; cat'",
        "",
    ),
    // -r drops blank lines inside --pipe's blocks too, not --pipepart's.
    (
        "",
        r"printf 'a\n\n  \nb\n' | parallel -k -r --pipe 'echo x; cat'",
        "",
    ),
    (
        "",
        r"printf 'a\n  ' | parallel -k -r --pipe 'echo x; cat' | od -c",
        "",
    ),
    (
        "",
        r"printf '\n \n' > bl; parallel -r --pipepart -a bl 'echo x; cat' | od -c",
        "",
    ),
    // --- --recstart, and --recend of more than one byte (--pipe and --pipepart).
    (
        "",
        r"printf 'x1
>a
AAA
>b
BB
>c
C
' > fa; parallel --pipepart -a fa --recstart '>' --block 3 -k 'echo =; cat'",
        "",
    ),
    (
        "E",
        r"printf 'x1
>a
AAA
>b
BB
>c
C
' | parallel --pipe --recstart '>' --block 3 -k 'echo =; cat'",
        "",
    ),
    (
        "",
        r"printf 'x1
>a
AAA
>b
BB
>c
C
' > fa; parallel --pipepart -a fa --recstart '>' --recend '
' --block 1 -k 'echo =; cat'",
        "",
    ),
    (
        "",
        r"printf 'x>y>z
>w
' > g; parallel --pipepart -a g --recstart '>' --block 1 -k 'echo =; cat'",
        "",
    ),
    (
        "",
        r"printf 'aXYbXYcXY' > xy; parallel --pipepart -a xy --recend XY --recstart b --block 1 -k 'echo =; cat; echo'",
        "",
    ),
    (
        "E",
        r"printf 'aXYbXYcXY' | parallel --pipe --recend XY --block 1 -k 'echo =; cat; echo'",
        "",
    ),
    (
        "E",
        r"printf 'aXYbXYcXY' | parallel --pipe --recend XY --recstart b --block 1 -k 'echo =; cat; echo'",
        "",
    ),
    (
        "E",
        r"printf 'a	b	c' | parallel --pipe --recend '	' --block 1 -k 'echo =; cat'",
        "",
    ),
    (
        "",
        r"printf 'aXYbXYcXY' | parallel --pipe --recend '' --block 3 -k 'cat; echo'",
        "",
    ),
    (
        "",
        r"seq 30000 | parallel --pipe --recend '0
' --block 10k wc -l | awk '{s+=$1} END {print s}'",
        "",
    ),
    ("", r"seq 3 | parallel --pipe --block -2 wc -l; echo $?", ""),
    (
        "",
        r"printf 'x1
>a
AAA
>b
BB
' | parallel --pipe --recstart '>' -N1 -k 'echo =; cat'; echo $?",
        "",
    ),
    (
        "",
        r"printf 'aXYbXYcXY' | parallel --pipe --recend XY -N2 -k 'echo =; cat; echo'",
        "",
    ),
    ("", r"seq 3 | parallel -k --pipe --recend '' -N2 od -c", ""),
    // --- --regexp: --recstart and --recend as Perl regular expressions.
    (
        "",
        r"printf 'Garbage
A1 Start 1
A1 x
A22 Start 2
B1 Start 3
' | parallel --pipe --regexp -k --recstart 'A\d+ Start' -N1 'echo Record; cat'",
        "",
    ),
    (
        "",
        r"printf 'Start
foo
Start
Start 2
End
' | parallel --pipe --regexp -k --recend '' --recstart '^Start$' -N1 'echo =; cat'",
        "",
    ),
    (
        "",
        r"printf 'a End
b End
End
c
' | parallel --pipe --regexp -k --recend 'End
' -N2 'echo =; cat'",
        "",
    ),
    (
        "",
        r"seq 54000 60000 | parallel -N100 --regexp --pipe --recstart 4 --recend 5 -k cat | cmp - <(seq 54000 60000) && echo same",
        "",
    ),
    (
        "",
        r"seq 30000 | parallel --regexp --pipe --block 10k --recend '[05]
' -k 'wc -l' | sort | uniq -c",
        "",
    ),
    (
        "",
        r"seq 10 > t; parallel --pipepart -a t -k --block 2 --regexp --recend 3'
' 'echo =; cat'",
        "",
    ),
    (
        "",
        r"seq 3 | parallel -k --pipe --regexp --recend '' -N1 od -c",
        "",
    ),
    (
        "D:an expression that does not compile: GNU Parallel passes the input on as one block; frun says so and runs nothing",
        r"seq 3 | parallel --pipe --regexp --recstart '(' cat; echo $?",
        "",
    ),
    ("", r"parallel --version | wc -l", ""),
    // --- A record longer than --block: the block grows for good, with GNU's warning.
    (
        "e",
        r"seq 3 | parallel -k --pipe --block 1 'echo =; cat'",
        "",
    ),
    (
        "e",
        r"seq 10 | parallel -k --pipe --recend '
' --recstart 6 --block 1 'echo =; cat'",
        "",
    ),
    (
        "e",
        r"printf 'aaaaaaaaaaaaaa
b
' | parallel -k --pipe --block 3 --regexp --recend 'b?
' 'echo =; cat'",
        "",
    ),
    // --- --rrs: the separators left out of each block.
    (
        "",
        r"echo 'a+b' | parallel -k --pipe --rrs --recend '+' -N1 'cat; echo end'",
        "",
    ),
    ("", r"seq 3 | parallel --pipe --rrs cat", ""),
    (
        "",
        r"printf '>a
>b
' | parallel -k --pipe --remove-rec-sep --recstart '>' -N1 'cat; echo'",
        "",
    ),
    (
        "",
        r"printf 'a1b2c3
' | parallel -k --pipe --regexp --rrs --recend '[0-9]' -N2 'cat; echo'",
        "",
    ),
    // --- --line-buffer (tests/line_buffer.rs shows lines arrive while jobs run).
    // Lines longer than frun holds (1 MiB) pass as they come; lines stay whole.
    (
        "",
        r"parallel -k --lb --tag 'head -c 3000000 /dev/zero | tr \0 {}; echo; echo end' ::: x y | md5sum",
        "",
    ),
    (
        "",
        r"parallel -j2 --lb --tag 'head -c 3000000 /dev/zero | tr \0 {}; echo; seq 3' ::: x y | sort | md5sum",
        "",
    ),
    (
        "",
        r"parallel -j4 -k --lb 'echo {}-1; sleep 0.{}; echo {}-2' ::: 3 1 2",
        "",
    ),
    (
        "s",
        r"parallel -j4 --line-buffer 'echo {}-1; sleep 0.{}; echo {}-2' ::: 3 1 2",
        "",
    ),
    (
        "",
        r"parallel -j2 --lb 'printf {}a; sleep {}; printf {}b' ::: 1 0",
        "",
    ),
    ("", r"parallel --linebuffer -k echo ::: a b c", ""),
    (
        "",
        r"seq 1000 | parallel --pipe --lb --block 1k -k cat | cmp - num1000 && echo same",
        "",
    ),
    (
        "",
        r"seq 30000 | parallel --pipe --lb --block 10k wc -l | awk '{s+=$1} END {print s}'",
        "",
    ),
    (
        "",
        r"parallel --lb -k --pipepart -a num30000 --block 10k cat | cmp - num30000 && echo same",
        "",
    ),
    ("", r"parallel -k --lb 'exit {}' ::: 0 1 2; echo $?", ""),
    ("", r"parallel -u --lb echo ::: a; echo $?", ""),
    ("", r"parallel --lb --group echo ::: a; echo $?", ""),
    ("", r"parallel --lb -g echo ::: a; echo $?", ""),
    ("", r"parallel --lb --tag echo ::: a; echo $?", ""),
    ("", r"parallel -k --lb --tag 'echo x; echo y' ::: a b", ""),
    (
        "",
        r#"parallel -k --lb --tagstring '<{}>' 'printf "1\n2"' ::: a b"#,
        "",
    ),
    ("s", r"parallel --lb --tag 'seq {}' ::: 1 2 3", ""),
    (
        "",
        r"parallel -k -j2 --lb --tag 'sleep 0.{}; echo {}' ::: 3 1",
        "",
    ),
    // --- --dry-run.
    ("", r"parallel --dry-run -k echo {} ::: A B C", ""),
    ("", r"parallel --dryrun -k echo {} ::: A B C", ""),
    (
        "",
        r#"parallel --dry-run -k echo {} ::: 'a b' "c'd" '' '$x' "''" "a'" "'a""#,
        "",
    ),
    ("", r"parallel --dry-run -k 'echo {} | cat' ::: 'x y'", ""),
    ("", r"parallel --dry-run -k -X echo ::: a 'b c' d", ""),
    ("", r"parallel --dry-run -k -N2 echo {2} {1} ::: a b c", ""),
    ("", r"parallel --dry-run -k echo {1} {2} ::: a b ::: c", ""),
    ("", r"parallel --dry-run -k ::: 'echo a' 'ls  -l'", ""),
    ("", r"parallel --dry-run -k -q echo 'a  b' {} ::: c", ""),
    (
        "",
        r"parallel --dry-run -k touch made ::: 1; ls made 2>/dev/null; echo $?",
        "",
    ),
    (
        "",
        r"printf 'a\nb\0c d\0' | parallel -0 -k --dry-run echo",
        "",
    ),
    ("", r"parallel --dry-run -k echo {#} {%} ::: a", ""),
    (
        "",
        r"parallel --dry-run -k --colsep , echo {2} :::: <(echo 'a,b c')",
        "",
    ),
    // --- Retries.
    (
        "",
        r"parallel -k --retries 3 'echo tried {} >>runs; echo completed {}; exit {}' ::: 1 2 0; echo $?; sort runs",
        "",
    ),
    (
        "",
        r"parallel -k --retries 1 'echo {}; exit 1' ::: a; echo $?",
        "",
    ),
    (
        "",
        r"parallel -k --retries 2 'test -e flag{} || { touch flag{}; exit 1; }; echo ok {}' ::: a b; echo $?",
        "",
    ),
    // --- More of the man pages' examples.
    (
        "",
        r"(echo 1; echo; echo 2) | parallel -k --no-run-if-empty echo",
        "",
    ),
    ("", r"cat num30000 | parallel -k --pipe -N14000 wc", ""),
    ("", r"parallel -k --tag echo foo-{} ::: A B C", ""),
    (
        "",
        r"parallel -k --tagstring {}-bar echo foo-{} ::: A B C",
        "",
    ),
    (
        "s",
        r"parallel --shuf echo ::: 1 2 3 ::: a b c ::: A B C",
        "",
    ),
    ("s", r"parallel --shuf echo :::: num10", ""),
    ("", r"parallel -k --shuf -j1 echo ::: 1", ""),
    ("", r"seq 5 | parallel -j 0 -k echo", ""),
    ("", r"parallel -k --eof stop echo ::: a stop b", ""),
    (
        "",
        r"parallel -k -E stop echo :::: <(printf 'a\nstop\nb\n')",
        "",
    ),
    ("", r"parallel -k --tag --tagstring 'x{}' echo ::: a", ""),
    ("", r"parallel -k --tagstring '{1.}' echo ::: a.b c.d", ""),
    ("", r"parallel -k -I ,, --tagstring ',,!' echo ,, ::: a", ""),
    (
        "",
        r"parallel -k -j2 --tagstring 'J{%}' 'sleep 0.{}; echo {}' ::: 3 1",
        "",
    ),
    (
        "",
        r"parallel -k --trim lr --colsep , echo '[{1}]' '[{2}]' :::: <(printf ' a , b \n')",
        "",
    ),
    (
        "",
        r"touch a.html b.html; find . -name '*.html' | parallel gzip --best; ls *.gz",
        "",
    ),
    (
        "",
        r"touch a.html b.html; parallel gzip --best ::: *.html; ls *.html.gz",
        "",
    ),
    (
        "",
        r"seq -w 0 99 | parallel touch pict{}.jpg; seq -w 0 99 | parallel rm pict{}.jpg; ls | wc -l",
        "",
    ),
    (
        "",
        r"seq -w 0 99 | parallel -X touch pict{}.jpg; seq -w 0 99 | perl -pe 's/(.*)/pict$1.jpg/' | parallel -m rm; ls | wc -l",
        "",
    ),
    (
        "",
        r"mkdir mirror_dir; ln -s /nonexistent mirror_dir/l1; ln -s /nonexistent mirror_dir/l2; find mirror_dir -type l | parallel -m rm {} '&&' touch {}; ls -l mirror_dir | cut -c1",
        "",
    ),
    (
        "",
        r#"doit() { echo Doing it for "$1"; sleep 0.1; echo Done with "$1"; }; export -f doit; parallel -k doit ::: 1 2 3"#,
        "",
    ),
    (
        "",
        r#"doubleit() { echo Doing it for "$1" "$2"; }; export -f doubleit; parallel -k doubleit ::: 1 2 3 ::: a b"#,
        "",
    ),
    (
        "",
        r#"tester() { if (eval "$@") >&/dev/null; then echo "[ OK ] $*"; else echo "[FAIL] $*"; fi; }; export -f tester; parallel -k tester exit ::: 1 0 2 0"#,
        "",
    ),
    (
        "",
        r#"doit() { echo "$1"; }; export -f doit; printf 'a\nb c\n' | parallel -k doit"#,
        "",
    ),
    (
        "",
        r"parallel -k --tag 'diff {1} {2} | wc -l' ::: abc-file def-file num10 ::: abc-file def-file num10 | sort -nk3",
        "",
    ),
    (
        "",
        r"find dir -type f | sort | parallel -k echo convert {} {#}.png",
        "",
    ),
    ("", r#"ARR=("a b" c); parallel -k echo ::: ${ARR[@]}"#, ""),
    ("", r#"ARR=("a b" c); parallel -k echo ::: "${ARR[@]}""#, ""),
    (
        "",
        r"parallel -k --link -a <(find . -maxdepth 1 -type f -name '*.log' | sort) -a <(seq 3) echo",
        "",
    ),
    (
        "",
        r#"perl_echo() { perl -e 'print "@ARGV\n"' "$@"; }; export -f perl_echo; parallel -k perl_echo ::: foo bar"#,
        "",
    ),
    ("", r"seq 3 | parallel -k -N0 -j1 --delay 0.1 echo x", ""),
    (
        "",
        r"parallel -k echo {1} {2} ::: A B :::: <(printf 'x\ny\n') ::: ",
        "",
    ),
    // --- Option spellings and odd placements.
    ("", r"parallel -k -- echo ::: a", ""),
    ("", r"parallel -k --will-cite echo ::: a", ""),
    (
        "D:--citation: GNU prints its citation notice and stops (255); frun accepts it silently and runs the line, as the drop-in's contract says",
        r"parallel -k --citation echo ::: a 2>/dev/null",
        "",
    ),
    ("", r"parallel -k --null echo :::: abc0-file", ""),
    (
        "",
        r"parallel -k --delimiter , echo ::: x :::: <(printf 'a,b,')",
        "",
    ),
    ("", r"parallel -k -d '\t' echo :::: <(printf 'a\tb\t')", ""),
    // GNU Parallel's retired --tollef is an error unless --gnu overrides it.
    ("", r"parallel -k --tollef echo ::: a; echo $?", ""),
    ("", r"parallel -k --tollef --gnu echo ::: a -- b", ""),
    ("", r"parallel --gnu -k --tollef echo ::: a", ""),
    // Without a command, a job of several records is one line, its records joined by spaces.
    (
        "",
        r"printf 'echo a\necho b\necho c\n' | parallel -N2 -k",
        "",
    ),
    ("", r"(echo echo; seq 12) | parallel -j1 -k -m -s 14", ""),
    ("", r"(echo echo; seq 5) | parallel -j1 -k -m", ""),
    // A `:::` value holding the delimiter is several values, split at each one.
    ("", r#"parallel -k -d " " echo ::: "1 done""#, ""),
    ("", r"parallel -k -d , echo X{}Y ::: a, ,b a,,b ::: p,q", ""),
    ("", r#"parallel -k echo X{}Y ::: "$(printf 'a\nb')" c"#, ""),
    (
        "",
        r#"parallel -k -X echo X{}Y ::: "$(printf 'a\nb\n')""#,
        "",
    ),
    ("", r"parallel -k -d '\n' echo :::: abc-file", ""),
    ("", r"parallel -k --replace=XX echo XX ::: a", ""),
    ("", r"parallel -k --colsep=- echo {2} :::: dashes", ""),
    ("", r"parallel -k -j2 --link echo ::: a b ::: c d", ""),
    ("", r"parallel -kX -j1 echo ::: a b", ""),
    ("", r"parallel -k0 echo :::: abc0-file", ""),
    ("", r"parallel -k echo :::", ""),
    ("", r"parallel -k ::: 'echo x' 'echo y'", ""),
    ("", r"printf 'echo x\necho y\n' | parallel -k", ""),
    (
        "",
        r"printf 'echo a b\nprintf %%s\\\\n c\n' | parallel -k",
        "",
    ),
    ("", r"parallel -k echo ::: --x -k", ""),
    ("", r"parallel -k echo -k ::: a", ""),
    // GNU prints its usage on stdout; frun one line on stderr. Both end with 255.
    ("E", r"parallel -j x echo ::: a >/dev/null; echo $?", ""),
    (
        "E",
        r"parallel --no-such-option echo ::: a >/dev/null; echo $?",
        "",
    ),
    ("E", r"parallel -j >/dev/null; echo $?", ""),
    // --- --results DIR and the --resume family (joblog times cut away).
    (
        "",
        r"parallel --results out echo ::: a b; find out | sort; cat out/1/a/stdout out/1/b/seq",
        "",
    ),
    (
        "",
        r"parallel --res out 'echo {}; echo e{} >&2' ::: a 'b c' ::: 1 2; find out | sort; cat out/1/a/2/1/stderr",
        "",
    ),
    (
        "",
        r"parallel --header : --results foo echo {a} {b} ::: a I II ::: b III IIII; find foo | sort; cat foo/a/I/b/III/stdout",
        "",
    ),
    // Named columns nest in the order of their names (GNU Parallel's tree).
    (
        "",
        r"parallel --header : --results foo echo ::: zz x ::: aa y ::: mm w >/dev/null; find foo | LC_ALL=C sort",
        "",
    ),
    (
        "",
        r"parallel --results out echo ::: 'a\b' c_d x/y 'tab	t' '*' -x ' ' '$HOME' ''; find out | sort",
        "",
    ),
    (
        "",
        r"parallel -N2 --results r echo ::: a b c d; find r | sort",
        "",
    ),
    (
        "",
        r"parallel --results 'o/{}.txt' echo ::: a b; find o | sort; cat o/a.txt o/b.txt.seq",
        "",
    ),
    (
        "",
        r"parallel --results 'p/{#}-{}/' echo ::: x y; find p | sort; cat p/1-x/stdout",
        "",
    ),
    (
        "",
        r"parallel --results out 'exit {}' ::: 0 1 2; echo $?; find out | sort",
        "",
    ),
    (
        "",
        r"parallel -k --tag --results out echo ::: a b; cat out/1/a/stdout",
        "",
    ),
    (
        "",
        r"parallel -u --results out echo ::: a; cat out/1/a/stdout",
        "",
    ),
    (
        "",
        r"parallel --results out --joblog jl echo ::: a b; cut -f1,6,7,9 jl | sort",
        "",
    ),
    (
        "",
        r"printf 'a\nb\n' | parallel --results out echo; find out | sort",
        "",
    ),
    (
        "",
        r"parallel --colsep '\t' --results c echo :::: tsv-file.tsv; find c | sort",
        "",
    ),
    (
        "",
        r"parallel --results out echo ::: a; parallel --results out echo X ::: a b; find out | sort; cat out/1/a/stdout",
        "",
    ),
    (
        "",
        r"parallel --results out echo ::: a b; rm -r out/1/a; parallel --resume --results out echo new ::: a b c; cat out/1/*/stdout",
        "",
    ),
    (
        "",
        r"parallel -j1 --joblog jl 'echo {}; exit $(( {} % 2 ))' ::: 1 2 3; parallel -j1 --resume --joblog jl 'echo {}; exit $(( {} % 2 ))' ::: 1 2 3 4 5; echo $?; cut -f1,7,9 jl",
        "",
    ),
    (
        "",
        r"parallel -j1 --joblog jl 'echo {}; exit $(( {} % 2 ))' ::: 1 2 3; parallel -j1 --resume-failed --joblog jl 'echo R{}' ::: 1 2 3 4; echo $?; cut -f1,7,9 jl",
        "",
    ),
    (
        "",
        r"parallel -j1 --joblog jl 'echo {}; exit $(( {} % 2 ))' ::: 1 2 3; parallel -j1 --retry-failed --joblog jl; echo $?; parallel -j1 --retry-failed --joblog jl echo ignored ::: x; echo $?; cut -f1,7,9 jl",
        "",
    ),
    (
        "",
        r"printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n1\t:\t1\t0\t0\t0\t0\t0\techo A\n1\t:\t1\t0\t0\t0\t1\t0\techo B\n2\t:\t1\t0\t0\t0\t1\t0\techo C\n2\t:\t1\t0\t0\t0\t0\t0\techo D\n3\t:\t1\t0\t0\t0\t0\t9\techo E\n5\t:\t1\t0\t0\t0\t2\t0\techo F\n' > jl; parallel -j1 -k --retry-failed --joblog jl; echo $?; tail -n +8 jl | cut -f1,7,9",
        "",
    ),
    (
        "",
        r"parallel -k --resume --joblog new.jl echo ::: a b; echo $?; cut -f1,9 new.jl | sort",
        "",
    ),
    (
        "",
        r"parallel --retry-failed --joblog none.jl; echo $?; cat none.jl",
        "",
    ),
    ("", r"parallel --retry-failed echo ::: a; echo $?", ""),
    ("E", r"parallel --resume echo ::: a; echo $?", ""),
    ("E", r"parallel --resume-failed echo ::: a; echo $?", ""),
    // Where output goes: the consumers of a process substitution outlive the run (issue 35).
    ("", r"echo 3 | parallel seq > >(wc -c); wait $!", ""),
    ("e", r"echo 3 | parallel seq 2> >(wc -c >&2); wait $!", ""),
    // --files: each job's output in a new private file in --tmpdir/$TMPDIR; its name printed.
    (
        "",
        r"parallel -k --files --tmpdir . --tag 'seq {}' ::: 2 3 | sed 's/par[^/]*\.par$/F/'; cat ./*.par | sort; stat -c %a ./*.par | sort -u",
        "",
    ),
    (
        "",
        r"mkdir t; TMPDIR=$PWD/t parallel --files echo ::: a | grep -c '/t/par'; cat t/*.par",
        "",
    ),
    (
        "",
        r"seq 3 | parallel -v --pipe --tagstring foo --files --tmpdir . cat | cut -f1; cat ./*.par",
        "",
    ),
    (
        "",
        r"parallel --files --tmpdir . --lb 'seq {}' ::: 1 2 3 | wc -l; cat ./*.par | sort",
        "",
    ),
    (
        "",
        r"parallel --files --tmpdir . --dry-run echo ::: a >/dev/null; ls",
        "",
    ),
    (
        "",
        "parallel -j1 -k --jl log 'echo \"a\nb\"' ::: x y 2>/dev/null; echo $?; cut -f 1,7- log | od -c",
        "",
    ),
    (
        "",
        "parallel -j1 --jl log 'echo \"{}\nz\"; exit 1' ::: x y; parallel -j1 --retry-failed --jl log echo no ::: q; echo $?; cut -f 1,7- log | od -c",
        "",
    ),
    (
        "D:--tmpdir or $TMPDIR not a directory: GNU dies in perl (status 2); frun refuses it in one line (255)",
        r"parallel --files --tmpdir /nonexistent echo ::: a 2>/dev/null; echo $?; TMPDIR=/nonexistent parallel --files echo ::: a 2>/dev/null; echo $?",
        "",
    ),
    // --compress: output is the same (frun buffers in memory, not in files).
    ("", r"parallel -k --compress seq {} 3 ::: 1 2", ""),
    (
        "",
        r"seq 3 | parallel -k --compress --compress-program gzip --decompress-program 'gzip -d' seq {} 4",
        "",
    ),
    ("", r"parallel -k --compress-program=gzip echo ::: a b", ""),
    (
        "e",
        r"parallel --compress ls /{} ::: nofile 2>&1 >/dev/null",
        "",
    ),
    // --jl is --joblog; +FILE appends; --dry-run appends nothing.
    (
        "",
        r"parallel -k --jl log echo ::: 1 2; parallel --dry-run -k --jl +log echo ::: 3; wc -l < log",
        "",
    ),
    // --results NAME.json/.csv/.tsv (`-.json`: stdout): one record per job; times masked.
    (
        "",
        r#"parallel -k --results -.json echo ::: a 'b"c' 'd\e' | sed -E 's/[0-9]+\.[0-9]{3}/T/g'"#,
        "",
    ),
    (
        "",
        r#"parallel -k --results out.csv echo {} ::: 'x y' 'a"b' ''; sed -E 's/[0-9]+\.[0-9]{3}/T/g' out.csv"#,
        "",
    ),
    (
        "",
        r"parallel -k --results -.csv 'echo {}; echo e >&2; exit 3' ::: 1 2 ::: u | sed -E 's/[0-9]+\.[0-9]{3}/T/g'",
        "",
    ),
    (
        "",
        r"printf 'A\tB\n1\t2\n3\t4\n' | parallel -k --header : --results -.tsv echo {B} {A} | sed -E 's/[0-9]+\.[0-9]{3}/T/g'",
        "",
    ),
    (
        "",
        r"parallel -k --tag --results -.csv echo ::: a b | sed -E 's/[0-9]+\.[0-9]{3}/T/g'",
        "",
    ),
    // With --files, a record's Stdout is the file's name (tagged with --tag), its Receive the
    // command's bytes; the name is GNU's shape (par, five characters, .par).
    (
        "",
        r"parallel -k --tag --files --tmpdir . --results -.csv echo ::: a b | sed -E 's:/par[^/]*\.par:/F:; s/[0-9]+\.[0-9]{3}/T/g'; rm -f par*.par",
        "",
    ),
    (
        "",
        r"parallel -k --files --tmpdir . echo ::: a | sed 's/par.....\.par/F/'; rm -f par*.par",
        "",
    ),
    // --results DIR --compress: the stdout and stderr files are compressed (pzstd here, or
    // --compress-program's); empty ones stay empty.
    (
        "",
        r"parallel --results r --compress 'echo {}; echo e{} >&2' ::: 1 2; cat r/1/*/stdout | pzstd -qdc; cat r/1/*/stderr | pzstd -qdc; wc -c < r/1/1/seq",
        "",
    ),
    (
        "",
        r"parallel --compress-program gzip --results r2 echo ::: a; gzip -dc < r2/1/a/stdout; wc -c < r2/1/a/stderr",
        "",
    ),
    // --pipe --csv: blocks end between whole CSV records (a quoted newline ends none); a
    // record longer than --block grows the block, with GNU's warning each time.
    (
        "",
        r#"printf '"a\nb",c\n"d\ne",f\nx,y\n' | parallel --pipe --csv -k --block 10 'cat; echo ---'"#,
        "",
    ),
    (
        "",
        r#"printf 'x,"a\nb"\nc,d\ne\n' | parallel --pipe --csv -k --block 3 'cat; echo ---' 2>&1"#,
        "",
    ),
    // --csv: each CSV record is a job, its fields {1} {2}…; quotes hold separators, newlines
    // and doubled quotes.
    (
        "",
        r#"printf 'a,b\n"x y",2\n"q""r",,\n"m\nn",o\n' > c.csv; parallel -k --csv echo {2}-{1} :::: c.csv"#,
        "",
    ),
    (
        "",
        r#"printf 'a,b\n"x y",2\n"q""r",,\n' | parallel -k --csv --header : echo {b}={a}"#,
        "",
    ),
    (
        "",
        r#"parallel -k --csv --colsep ';' echo {1}/{2} ::: 'a;"b;c"' 'd;e'"#,
        "",
    ),
    (
        "D:--results naming a file: GNU fails in perl (mkdir: File exists, status 17); frun refuses it in one line (255)",
        r"touch afile; parallel --results afile echo ::: a 2>/dev/null; echo $?",
        "",
    ),
    (
        "D:a value `..` under --results: GNU's path climbs out of DIR (DIR/1/../stdout); frun writes DIR/1/\\..",
        r"parallel --results out echo ::: ..; find . -name stdout | sort",
        "",
    ),
    (
        "D:-N with a value that is not a number: GNU reads it as 0; frun refuses it",
        r"parallel -N x echo ::: a; echo $?",
        "",
    ),
    // --- perl replacement strings: {= =}, {=N =}, --rpl, --plus (one perl process per run).
    ("", r"parallel -k echo {= s/a/b/ =} ::: a ab", ""),
    (
        "",
        r"parallel -k echo '{=1 $_=uc($_) =}-{2}' ::: a b ::: c",
        "",
    ),
    ("", r"parallel -k echo l{= s/a/b/ =}x ::: a", ""),
    ("", r"parallel echo '{= s/a/b/=}{= {= s/a/b/=}' ::: a", ""),
    ("", r"parallel echo {={= =} '{= {= =} =}' ::: a", ""),
    (
        "",
        r"parallel -j1 -k 'echo {= $_=++$::G =}' ::: 1 2 ::: a b",
        "",
    ),
    (
        "",
        r"parallel -j1 -k 'echo {=1 $_=++$::G =}' ::: 1 2 ::: a b",
        "",
    ),
    ("", r"parallel -k echo '{}{=uq()=}' ::: '`echo foo`'", ""),
    ("", r#"parallel -k echo '{= $_=Q($_) =}' ::: "a'b""#, ""),
    (
        "",
        r#"parallel -k 'echo {= $_=pQ($_) =}' ::: 'a$b@c\d"e'"#,
        "",
    ),
    (
        "",
        r#"parallel -j1 -k echo '{= $_=$job->seq()." ".slot()." ".seq() =}' ::: a b"#,
        "",
    ),
    (
        "",
        r#"parallel -k echo '{= $_="$arg[2]$arg[1]" =}' ::: a ::: b"#,
        "",
    ),
    ("", r"parallel -k -X echo 'x{= s/a/b/ =}' ::: a a", ""),
    ("", r"echo p /bin/true | parallel l{= s/p/s/ =}", ""),
    ("", r"echo s /bin/true | parallel l{}", ""),
    (
        "",
        r"parallel --header : echo '{=v2=}{=v1 $_=Q($_)=}' ::: v1 K ::: v2 O",
        "",
    ),
    ("", "parallel \"echo {1\n } {2}\" ::: O ::: K", ""),
    (
        "",
        r#"parallel -k echo '{= exit if $_ eq "b" =}' ::: a; echo $?"#,
        "",
    ),
    (
        "D:a perl expression that dies: GNU prints perl's message and stops with status 25 (perl's \
         errno); frun prints it as one `frun:` line and stops with status 255",
        r#"parallel -j1 -k 'echo x{= die "boom\n" if $_ eq "b" =}' ::: a b c 2>/dev/null; echo $?"#,
        "",
    ),
    (
        "",
        r"parallel -k --plus echo {+/} {+.} {..} {+..} {/..} {...} {+...} {/...} ::: a/b.c.d x a.b. a..",
        "",
    ),
    (
        "",
        r"parallel -k --plus echo {%.z.z} {%%.z.*z} {#z.*z.} {##z.*z.} ::: z.z.foo.z.z.z",
        "",
    ),
    (
        "",
        r"parallel -k --plus echo {:-def} {:2} {:1:2} {/a/X} {//a/X} {^a} {^^a} {,A} {,,A} ::: abAB ''",
        "",
    ),
    (
        "",
        r"parallel -k --plus echo {2:1:2} {1/a/X} {1+/} {2/..} ::: a/b.c ::: d/e.f.g",
        "",
    ),
    ("", r"parallel -k --plus echo '{slot}' ::: a", ""),
    (
        "",
        r"parallel -k --rpl '{x} s/a/X/g' echo {x} {2x} ::: aa ::: ba",
        "",
    ),
    (
        "",
        r"parallel -k --rpl '%D s:/[^/]*$::' --rpl '%' echo %D % ::: a/b/c",
        "",
    ),
    (
        "",
        r"parallel -k --rpl '{r(\d)} $_ = $_ x $$1' echo {r3} {2r2} ::: ab ::: c",
        "",
    ),
    // --- --number-of-*, --use-*-instead-of-threads: this machine, then a described one.
    (
        "",
        r"for o in sockets cores threads cpus; do parallel --number-of-$o; done; parallel --number-of-cores x y",
        "",
    ),
    (
        "",
        r#"export PARALLEL_CPUINFO="$(for p in 0 1 2 3 4 5 6 7; do printf 'processor\t: %d\nphysical id\t: %d\ncore id\t\t: %d\n\n' $p $((p/4)) $((p%2)); done)"; for o in sockets cores threads cpus; do parallel --number-of-$o; done"#,
        "",
    ),
    (
        "s",
        r#"export PARALLEL_CPUINFO="$(for p in 0 1 2 3 4 5; do printf 'processor\t: %d\nphysical id\t: %d\ncore id\t\t: %d\n\n' $p $((p/3)) $((p%3)); done)"; for j in '' '-j100%' '--use-sockets-instead-of-threads -j100%' '--use-cores-instead-of-threads -j+1' '--use-cores-instead-of-threads -j-1' '-j50% --use-sockets-instead-of-threads'; do parallel $j 'sleep 0.2; echo {%}' ::: 1 2 3 4 5 6 7 8 | sort -u | tr '\n' ' '; echo; done"#,
        "",
    ),
    // --- --wd DIR (made when missing), --wd ... (made and removed), --nice N.
    (
        "",
        r#"export P=$PWD; parallel -k --wd dir/sub '[ "$OLDPWD" = "$P" ] && basename "$PWD"' ::: a; parallel --wd new/x 'pwd | sed s:.*/new:new:; echo {}' ::: b; ls -d new/x; parallel --workdir=. '[ "$PWD" = "$P" ] && echo here' ::: c"#,
        "",
    ),
    (
        "",
        r#"export P=$PWD; parallel -k -j1 --wd ... 'pwd | sed "s:^$HOME/::; s/[0-9][0-9]*/N/g"; [ "$OLDPWD" = "$P" ] && echo {}' ::: a b; parallel --wd ... pwd ::: c > d; [ -e "$(cat d)" ] && echo left || echo gone"#,
        "",
    ),
    (
        "",
        r"parallel -k --nice 7 'ps -o ni= -p $$; echo {}' ::: a b",
        "",
    ),
    ("e", r"parallel --nice 1 -vv 'echo {}' ::: b", ""),
    (
        "",
        r"parallel -k --load 1000 echo ::: a b; parallel -k --load=100000% -j2 echo",
        "c\nd\n",
    ),
    (
        "",
        r"parallel -k --env fu --env=X echo ::: a; echo x | parallel -k -o 'tty; cat; echo {}' ::: 1 2; echo y | parallel --open-tty 'cat; echo {}' ::: 3",
        "",
    ),
    ("", r"parallel --tty 'sleep 0.2; echo {%}' ::: 1 2 3", "x\n"),
    // --- --tee: all of the input to every job, one job per combination of the values.
    (
        "",
        r"seq 1000 | parallel --pipe --tee -k --tag 'grep {1} | wc {2}' ::: 1 2 ::: -l -c",
        "",
    ),
    (
        "",
        r"seq 100000 | parallel --pipe --tee -k ::: 'head -1' wc 'tail -1'",
        "",
    ),
    (
        "",
        r"printf '' | parallel --pipe --tee -k --tag wc ::: -l -c; echo $?",
        "",
    ),
    (
        "",
        r"seq 3 | parallel --pipe --tee -k -v wc {} ::: -w -l -c",
        "",
    ),
    (
        "",
        r"seq 5 | parallel --pipe --tee -k 'echo {#} {%}; wc -l' ::: a b c",
        "",
    ),
    // (More combinations than -j: GNU Parallel's `tee` would wait for the missing job's pipe
    // forever, holding the case's stderr; frun's error is checked in tee.rs's unit test.)
    (
        "",
        r"parallel --pipepart -a num1000 --tee -k --tag 'wc {}' ::: -l -c",
        "",
    ),
    (
        "",
        r"seq 10 | PARALLEL='--tee --pipe -k' parallel 'wc -l' ::: 1 2",
        "",
    ),
    (
        "",
        r"seq 3 | parallel --pipe --tee ::: 'exit 2' 'exit 3' true; echo $?",
        "",
    ),
    (
        "",
        r"seq 100 | parallel --pipe --tee -k --tag 'grep -c {}' :::: num10",
        "",
    ),
    ("", r"parallel --tee -k echo ::: a b", ""),
    (
        "",
        r"seq 20 | parallel --pipe --tee -k --tag 'head -{1} | tail -{2}' ::: 1 2 :::+ 3 4",
        "",
    ),
    (
        "",
        r"seq 100000 | parallel --pipe --tee -k -j3 'cat | wc -c' ::: a b c",
        "",
    ),
    (
        "",
        r#"seq 3 | parallel --pipe --tee -k 'echo {}' ::: 'a b' "it's""#,
        "",
    ),
];

/// Flags frun parallel refuses: (the flags as written before `touch ran ::: 1`, the flag the
/// one-line refusal must name).
const REFUSED: &[(&str, &str)] = &[
    ("--sshlogin server", "--sshlogin"),
    ("-S server", "-S"),
    ("-Sserver", "-S"),
    ("-S :,server", "-S"),
    ("--sshloginfile hosts", "--sshloginfile"),
    ("--slf hosts", "--slf"),
    ("--transferfile {}", "--transferfile"),
    ("--return x", "--return"),
    ("--trc x", "--trc"),
    ("--basefile x", "--basefile"),
    ("--onall", "--onall"),
    ("--tmux", "--tmux"),
    ("--tmuxpane", "--tmuxpane"),
    ("--sql x", "--sql"),
    ("--sqlmaster x", "--sqlmaster"),
    ("--sqlworker x", "--sqlworker"),
    ("--sqlandworker x", "--sqlandworker"),
    ("--noswap", "--noswap"),
    ("--semaphore --st 1", "--st"),
    ("--filter '{1} < 2'", "--filter"),
    ("--lb -u", "--line-buffer"),
    ("--ll --files", "--latest-line"),
    ("--lb --results out", "--line-buffer"),
    ("--interactive --lb -u", "--ungroup"),
    ("--arg-sep ''", "--arg-sep"),
    ("--pipepart", "--pipepart"),
    ("--files -u", "--files"),
    ("--xargs", "--xargs"),
];

/// Which `parallel` a bash line finds first on PATH.
#[derive(Clone, Copy)]
enum Tool {
    Gnu,
    Frun,
}

struct Ran {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// None: killed (by the time limit).
    status: Option<i32>,
}

/// Directories holding a `parallel` for each tool.
struct Bins {
    gnu: PathBuf,
    frun: PathBuf,
}

fn bins(base: &Path) -> Bins {
    use std::os::unix::fs::PermissionsExt;
    let gnu = base.join("gnu-bin");
    let frun = base.join("frun-bin");
    std::fs::create_dir_all(&gnu).unwrap();
    std::fs::create_dir_all(&frun).unwrap();
    // GNU Parallel's `sem` is its `parallel` started under that name (a link beside it).
    for name in ["parallel", "sem"] {
        let script = gnu.join(name);
        std::fs::write(
            &script,
            format!(
                "#!/bin/bash\nexec {} --will-cite \"$@\"\n",
                Path::new(GNU).with_file_name(name).display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Started through a link of that name, frun is the personality.
        std::os::unix::fs::symlink(BIN, frun.join(name)).unwrap();
    }
    Bins { gnu, frun }
}

/// Runs `line` with `stdin` in a fresh `dir` holding [`SETUP`]'s files.
fn run(bins: &Bins, tool: Tool, dir: &Path, line: &str, stdin: &str) -> Ran {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let setup = Command::new("bash")
        .arg("-c")
        .arg(SETUP)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        setup.status.success(),
        "setup: {}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let bin = match tool {
        Tool::Gnu => &bins.gnu,
        Tool::Frun => &bins.frun,
    };
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = assert_cmd::Command::new("bash")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("PATH", path)
        .env("PARALLEL_SHELL", "/bin/bash")
        .env("LC_ALL", "C.UTF-8")
        .write_stdin(stdin.as_bytes().to_vec())
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    Ran {
        stdout: out.stdout,
        stderr: out.stderr,
        status: out.status.code(),
    }
}

fn sorted_lines(b: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
    v.sort_unstable();
    v
}

fn show(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 1500 {
        let end = (0..=1500)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}…", &s[..end])
    } else {
        s.into_owned()
    }
}

/// Why the two runs of `case` differ, or None.
fn mismatch(mode: &str, g: &Ran, f: &Ran) -> Option<String> {
    let mut why = Vec::new();
    let same_out = if mode.contains('s') {
        sorted_lines(&g.stdout) == sorted_lines(&f.stdout)
    } else {
        g.stdout == f.stdout
    };
    if !same_out {
        why.push("stdout");
    }
    if g.status != f.status {
        why.push("status");
    }
    if mode.contains('e') && g.stderr != f.stderr {
        why.push("stderr");
    }
    if !mode.contains('e') && !mode.contains('E') && g.stderr.is_empty() != f.stderr.is_empty() {
        why.push("stderr (empty for only one)");
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// Runs `work(i)` for every index below `n` on a few threads.
fn on_threads(n: usize, work: impl Fn(usize, usize) + Sync) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..3 {
            let (next, work) = (&next, &work);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    work(t, i);
                }
            });
        }
    });
}

fn base_dir() -> tempfile::TempDir {
    assert!(
        Path::new(GNU).exists(),
        "GNU Parallel ({GNU}) is needed for the differential corpus (Debian's package `parallel`)"
    );
    tempfile::Builder::new()
        .prefix("parallel-corpus-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

#[test]
fn gnu_parallel_lines_run_the_same_under_frun_parallel() {
    let base = base_dir();
    let bins = bins(base.path());
    let failures = Mutex::new(Vec::new());
    let compare = |i: usize, dir: &Path| -> Option<String> {
        let (mode, line, stdin) = CASES[i];
        let g = run(&bins, Tool::Gnu, dir, line, stdin);
        let f = run(&bins, Tool::Frun, dir, line, stdin);
        let documented = mode.strip_prefix("D:");
        let differs = mismatch(if documented.is_some() { "" } else { mode }, &g, &f);
        let report = match (documented, differs) {
            (None, None) | (Some(_), Some(_)) => return None,
            (None, Some(why)) => format!("differs in {why}"),
            (Some(reason), None) => {
                format!("listed as a difference ({reason}) but now the same: update the table")
            }
        };
        Some(format!(
            "case {i} [{mode}] {line}\n  {report}\n  gnu  status {:?}\n  stdout: {}\n  stderr: {}\n  frun status {:?}\n  stdout: {}\n  stderr: {}",
            g.status,
            show(&g.stdout),
            show(&g.stderr),
            f.status,
            show(&f.stdout),
            show(&f.stderr)
        ))
    };
    // FRUN_CORPUS_FIRST=N: only the cases from N on (while working on new ones at the end).
    let first: usize = std::env::var("FRUN_CORPUS_FIRST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    on_threads(CASES.len(), |t, i| {
        if i < first {
            return;
        }
        if let Some(r) = compare(i, &base.path().join(format!("w{t}"))) {
            failures.lock().unwrap().push((i, r));
        }
    });
    // A case that races sleeps against each other (its line says `sleep`) may lose the race
    // on a busy machine, for GNU Parallel as for frun: it runs once more, alone. Every other
    // case must agree the first time.
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    let failures: Vec<String> = failures
        .into_iter()
        .filter_map(|(i, first)| {
            if !CASES[i].1.contains("sleep") {
                return Some(first);
            }
            let again = compare(i, &base.path().join("alone"))?;
            Some(format!(
                "{again}\n  (run alone again; the first time:\n  {first})"
            ))
        })
        .collect();
    eprintln!(
        "parallel corpus: {} cases, {} as GNU Parallel (or documented)",
        CASES.len() - first.min(CASES.len()),
        CASES.len() - first.min(CASES.len()) - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} cases differ:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn refused_flags_say_so_in_one_line_and_run_nothing() {
    let base = base_dir();
    let bins = bins(base.path());
    let failures = Mutex::new(Vec::new());
    on_threads(REFUSED.len(), |t, i| {
        let (flags, name) = REFUSED[i];
        let dir = base.path().join(format!("w{t}"));
        let line = format!("parallel {flags} touch ran ::: 1");
        let f = run(&bins, Tool::Frun, &dir, &line, "");
        let stderr = String::from_utf8_lossy(&f.stderr);
        let one_line = stderr.lines().count() == 1 && stderr.ends_with('\n');
        let ok = f.status == Some(255)
            && one_line
            && stderr.starts_with("frun: ")
            && stderr.contains(name)
            && f.stdout.is_empty()
            && !dir.join("ran").exists();
        if !ok {
            failures.lock().unwrap().push(format!(
                "{line}: status {:?}, stderr {stderr:?}, ran: {}",
                f.status,
                dir.join("ran").exists()
            ));
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `--round-robin --pipe`: each of the first -j batches starts its own command, whatever
/// order the workers count their claims in (a worker that counted first once took the next
/// batch as its lane's and left a later batch to start a command: `{#}` 1 2 4). Run many
/// times, since it depends on timing; the expectation is `seq`'s.
#[test]
fn round_robin_starts_a_command_for_each_of_the_first_batches() {
    let want: String = (1..=200).map(|n| format!("{n} 1\n")).collect();
    let failures = Mutex::new(Vec::new());
    on_threads(12, |_, i| {
        let out = assert_cmd::Command::new(BIN)
            .args(["parallel", "-j200", "-k", "--round-robin", "--pipe", "-N1"])
            .arg("echo {#} $(wc -l)")
            .write_stdin((1..=200).map(|n| format!("{n}\n")).collect::<String>())
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        if out.stdout != want.as_bytes() || !out.status.success() {
            failures.lock().unwrap().push(format!(
                "run {i}: status {:?}, stdout {}",
                out.status.code(),
                show(&out.stdout)
            ));
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `--shellcompletion bash`: the script, evaluated in bash, completes `parallel --ter` to
/// `--termseq` and leaves other words to the shell's file names.
#[test]
fn shellcompletion_completes_options_in_bash() {
    let script = format!(
        r#"eval "$('{BIN}' parallel --shellcompletion bash)"
        COMP_WORDS=(parallel --ter); COMP_CWORD=1; _frun_parallel_complete; echo "[${{COMPREPLY[*]}}]"
        COMPREPLY=(); COMP_WORDS=(parallel fil); COMP_CWORD=1; _frun_parallel_complete; echo "$? [${{COMPREPLY[*]}}]"
        complete -p parallel"#
    );
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "[--termseq]\n1 []\ncomplete -o bashdefault -o default -F _frun_parallel_complete parallel\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
