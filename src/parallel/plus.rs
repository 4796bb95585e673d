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
    ("{+/}", r#"$_ = m{^(.*)/}s ? $1 : """#),
    ("{+.}", r#"$_ = m{^.*\.(.*)$}s ? $1 : """#),
    ("{+..}", r#"$_ = m{\.([^/.]*\.[^/.]*)$} ? $1 : """#),
    ("{+...}", r#"$_ = m{\.([^/.]*\.[^/.]*\.[^/.]*)$} ? $1 : """#),
    ("{..}", r#"s{\.[^/.]*\.[^/.]*$}{}"#),
    ("{...}", r#"s{\.[^/.]*\.[^/.]*\.[^/.]*$}{}"#),
    ("{/..}", r#"s{^.*/}{}s; s{\.[^/.]*\.[^/.]*$}{}"#),
    ("{/...}", r#"s{^.*/}{}s; s{\.[^/.]*\.[^/.]*\.[^/.]*$}{}"#),
    ("{slot}", r#"1 $_ = slot()"#),
    // A job whose values are not all different, or not in increasing order, is skipped.
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

/// `--plus` strings frun does not have, and why (they would need all input read first): a
/// line holding one is refused.
const PLUS_REFUSED: &[(&str, &str)] = &[
    ("{##}", "the total number of jobs"),
    ("{0#}", "the total number of jobs"),
    ("{0%}", "the number of job slots"),
];

/// `--plus`'s replacement strings.
pub(super) fn plus() -> Vec<Rpl> {
    PLUS.iter()
        .map(|(t, b)| Rpl {
            tag: t.as_bytes().to_vec(),
            body: b.as_bytes().to_vec(),
        })
        .collect()
}

/// Why a line with `--plus` strings cannot run, if it cannot.
pub(super) fn plus_refusal(line: &[u8]) -> Option<String> {
    PLUS_REFUSED.iter().find_map(|(t, why)| {
        memchr::memmem::find(line, t.as_bytes()).map(|_| {
            format!(
                "--plus's {{{} needs {why}, which frun parallel does not provide",
                t.trim_start_matches('{')
            )
        })
    })
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
