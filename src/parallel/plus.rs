//! `--plus` and `--rpl`: GNU Parallel's extra replacement strings, written as the perl
//! expressions they stand for (frun's own perl, following their documented meaning), and the
//! parsing of a user's `--rpl 'TAG PERL'`.
//!
//! It only defines strings: evaluating them is the engine's perl evaluator's job.

use frun_engine::exec::command::perl::Rpl;

/// `--plus`'s strings: (tag, perl expression), a longer prefix before a shorter one (of two
/// tags matching the same text, the first wins). A tag with `(` is a pattern whose groups are
/// `$$1`, `$$2` in the expression; a body that starts with `1 ` is evaluated once per job.
const PLUS: &[(&str, &str)] = &[
    // All the jobs and the job slots: the input is read whole first (see `needs_total`).
    ("{##}", r#"1 $_ = total_jobs()"#),
    (
        "{0#}",
        r#"1 $_ = sprintf("%0" . length(total_jobs()) . "d", seq())"#,
    ),
    (
        "{0%}",
        r#"1 $_ = sprintf("%0" . length($Global::max_jobs_running) . "d", slot())"#,
    ),
    ("{+/}", r#"$_ = m{^(.*)/}s ? $1 : """#),
    ("{+.}", r#"$_ = m{^.*\.(.*)$}s ? $1 : """#),
    ("{+..}", r#"$_ = m{\.([^/.]*\.[^/.]*)$} ? $1 : """#),
    ("{+...}", r#"$_ = m{\.([^/.]*\.[^/.]*\.[^/.]*)$} ? $1 : """#),
    ("{..}", r#"s{\.[^/.]*\.[^/.]*$}{}"#),
    ("{...}", r#"s{\.[^/.]*\.[^/.]*\.[^/.]*$}{}"#),
    ("{/..}", r#"s{^.*/}{}s; s{\.[^/.]*\.[^/.]*$}{}"#),
    ("{/...}", r#"s{^.*/}{}s; s{\.[^/.]*\.[^/.]*\.[^/.]*$}{}"#),
    ("{slot}", r#"1 $_ = slot()"#),
    // A job whose values are not all different, or not in increasing order, is skipped (a
    // failed job that does not run).
    (
        "{uniq}",
        r#"my %seen; skip() if grep { $seen{$_}++ } @arg[1 .. $#arg]"#,
    ),
    (
        "{choose_k}",
        r#"for my $i (2 .. $#arg) { skip() if $arg[$i - 1] ge $arg[$i] }"#,
    ),
    ("{:-([^}]+?)}", r#"$_ ||= $$1"#),
    (
        "{:([0-9]+?)}",
        r#"$_ = length($_) > $$1 ? substr($_, $$1) : """#,
    ),
    (
        "{:([0-9]+?):([0-9]+?)}",
        r#"$_ = length($_) > $$1 ? substr($_, $$1, $$2) : """#,
    ),
    ("{##([^#}][^}]*?)}", r#"s/^(?:$$1)//s"#),
    (
        "{#([^#}][^}]*?)}",
        r#"for my $i (0 .. length $_) { if (substr($_, 0, $i) =~ /^(?:$$1)$/s) { $_ = substr($_, $i); last } }"#,
    ),
    (
        "{%%([^}]+?)}",
        r#"for my $i (0 .. length $_) { if (substr($_, $i) =~ /^(?:$$1)$/s) { $_ = substr($_, 0, $i); last } }"#,
    ),
    (
        "{%([^}]+?)}",
        r#"for (my $i = length $_; $i >= 0; $i--) { if (substr($_, $i) =~ /^(?:$$1)$/s) { $_ = substr($_, 0, $i); last } }"#,
    ),
    ("{//([^}]+?)/([^}]*?)}", r#"s/$$1/$$2/g"#),
    ("{/([^}]+?)/([^}]*?)}", r#"s/$$1/$$2/"#),
    ("{\\^\\^([^}]+?)}", r#"s/($$1)/uc($1)/eg"#),
    ("{\\^([^}]+?)}", r#"s/^($$1)/uc($1)/e"#),
    ("{,,([^}]+?)}", r#"s/($$1)/lc($1)/eg"#),
    ("{,([^}]+?)}", r#"s/^($$1)/lc($1)/e"#),
];

/// The strings GNU Parallel knows without `--plus`: the job's number and slot, which GNU
/// Parallel 20221122 pads only with `--plus` (without, it has not counted the jobs nor the
/// slots, and pads to one digit), so the input need not be read whole first.
const ALWAYS: &[(&str, &str)] = &[("{0#}", r#"1 $_ = seq()"#), ("{0%}", r#"1 $_ = slot()"#)];

/// Whether any of `texts` may hold one of [`always`]'s strings (`{0#}`, `{0%}`, `{N0#}`…).
pub(super) fn any_always<'a>(mut texts: impl Iterator<Item = &'a [u8]>) -> bool {
    texts.any(|t| {
        [&b"0#}"[..], b"0%}"]
            .iter()
            .any(|s| memchr::memmem::find(t, s).is_some())
    })
}

/// `--plus`'s replacement strings.
pub(super) fn plus() -> Vec<Rpl> {
    rpls(PLUS)
}

/// The replacement strings every line has besides `{}` and its kin (after `--rpl`'s and
/// `--plus`'s, so a tag of theirs wins).
pub(super) fn always() -> Vec<Rpl> {
    rpls(ALWAYS)
}

fn rpls(list: &[(&str, &str)]) -> Vec<Rpl> {
    list.iter()
        .map(|(t, b)| Rpl {
            tag: t.as_bytes().to_vec(),
            body: b.as_bytes().to_vec(),
        })
        .collect()
}

/// Whether a line needs the number of all the jobs before they start (`--plus`'s `{##}` and
/// `{0#}`, perl's `total_jobs()`): its input is then read whole first, as GNU Parallel reads
/// it.
pub(super) fn needs_total(line: &[u8], plus: bool) -> bool {
    let tags: &[&[u8]] = match plus {
        true => &[b"{##}", b"{0#}", b"total_jobs"],
        false => &[b"total_jobs"],
    };
    tags.iter().any(|t| memchr::memmem::find(line, t).is_some())
}

/// `--rpl 'TAG PERL'`: the tag is the text up to the first blank.
pub(super) fn rpl(v: &str) -> Result<Rpl, String> {
    let v = v.trim_start();
    let (tag, body) = v.split_once(char::is_whitespace).unwrap_or((v, ""));
    if tag.is_empty() {
        return Err(format!("--rpl '{v}': expected 'TAG perl-expression'"));
    }
    Ok(Rpl {
        tag: tag.as_bytes().to_vec(),
        body: body.as_bytes().to_vec(),
    })
}
