//! `$PARALLEL`: options GNU Parallel reads from the environment before the command line's,
//! split into words as a shell would split them (Perl's `Text::ParseWords::shellwords`, which
//! GNU Parallel uses). It only splits: it reads no variable and judges no option.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

/// Splits `text` into words: blanks separate words; `'…'` is taken as it is; `"…"` and bare
/// text take a backslash as "the next byte as it is". An unclosed quote is an error.
pub(in crate::parallel) fn shell_words(text: &[u8]) -> Result<Vec<OsString>, String> {
    let mut words = Vec::new();
    let mut word: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        i += 1;
        match b {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c' => {
                if let Some(w) = word.take() {
                    words.push(OsString::from_vec(w));
                }
            }
            b'\'' => {
                let w = word.get_or_insert_with(Vec::new);
                let end = text[i..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .ok_or("an unclosed ' quote")?;
                w.extend_from_slice(&text[i..i + end]);
                i += end + 1;
            }
            b'"' => {
                let w = word.get_or_insert_with(Vec::new);
                loop {
                    match text.get(i) {
                        None => return Err("an unclosed \" quote".into()),
                        Some(b'"') => break,
                        Some(b'\\') if i + 1 < text.len() => {
                            w.push(text[i + 1]);
                            i += 2;
                        }
                        Some(&c) => {
                            w.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            b'\\' if i < text.len() => {
                word.get_or_insert_with(Vec::new).push(text[i]);
                i += 1;
            }
            _ => word.get_or_insert_with(Vec::new).push(b),
        }
    }
    if let Some(w) = word {
        words.push(OsString::from_vec(w));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::shell_words;

    fn split(s: &str) -> Vec<String> {
        shell_words(s.as_bytes())
            .unwrap()
            .into_iter()
            .map(|w| w.into_string().unwrap())
            .collect()
    }

    #[test]
    fn splits_as_perl_shellwords_does() {
        assert_eq!(split(" -v"), ["-v"]);
        assert_eq!(split("  -j 2\t-k  "), ["-j", "2", "-k"]);
        assert_eq!(
            split(r#"--tagstring 'a b' x"y z"w"#),
            ["--tagstring", "a b", "xy zw"]
        );
        assert_eq!(split(r#"a\ b "c\"d" 'e\f'"#), ["a b", "c\"d", r"e\f"]);
        assert_eq!(split("''"), [""]);
        assert!(split("").is_empty());
        assert!(shell_words(b"'open").is_err());
        assert!(shell_words(b"\"open").is_err());
    }
}
