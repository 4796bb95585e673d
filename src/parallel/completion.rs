//! `frun parallel --shellcompletion bash|zsh|auto`: the text of a completion function for
//! interactive shells (to `eval`), completing the long options of `parallel` (frun through a
//! link of that name) and, elsewhere, file names; `frun` itself has clap's completions
//! (`frun --generate complete-bash`). It writes the script only; the shell runs it.

use crate::invocation::Invocation;

/// The long options that take a value (the switches are `super::SWITCHES`).
pub(super) const VALUED: &[&str] = &[
    "arg-file",
    "arg-file-sep",
    "arg-sep",
    "basenameextensionreplace",
    "basenamereplace",
    "block",
    "colsep",
    "compress-program",
    "ctagstring",
    "decompress-program",
    "delay",
    "delimiter",
    "dirnamereplace",
    "env",
    "extensionreplace",
    "group-by",
    "halt",
    "header",
    "id",
    "jobs",
    "joblog",
    "load",
    "max-args",
    "max-chars",
    "max-procs",
    "max-replace-args",
    "memfree",
    "nice",
    "process-slot-var",
    "profile",
    "recend",
    "recstart",
    "results",
    "retries",
    "rpl",
    "seqreplace",
    "slotreplace",
    "sshlogin",
    "tagstring",
    "termseq",
    "timeout",
    "tmpdir",
    "tmpl",
    "trim",
    "wd",
];

/// The script for `shell` (`bash`, `zsh`, or `auto`: the shell frun was started from, else
/// `$SHELL`).
pub(super) fn script(shell: &str) -> Invocation {
    let shell = match shell {
        "auto" => detected(),
        s => s.to_string(),
    };
    let words: Vec<String> = super::SWITCHES
        .iter()
        .chain(VALUED)
        .map(|o| format!("--{o}"))
        .collect();
    let bash = format!(
        "_frun_parallel_complete() {{\n\
         \x20   local cur=${{COMP_WORDS[COMP_CWORD]}}\n\
         \x20   case $cur in\n\
         \x20       --*) COMPREPLY=($(compgen -W '{}' -- \"$cur\")) ;;\n\
         \x20       *) return 1 ;;\n\
         \x20   esac\n\
         }}\n\
         complete -o default -o bashdefault -F _frun_parallel_complete parallel\n",
        words.join(" ")
    );
    let text = match shell.as_str() {
        "bash" => bash,
        // zsh runs bash's completion functions through its bashcompinit.
        "zsh" => format!("autoload -U +X bashcompinit && bashcompinit\n{bash}"),
        other => {
            return super::refuse(format!(
                "--shellcompletion {other}: frun writes completion for bash and zsh (or auto)"
            ));
        }
    };
    Invocation::Print(text.into_bytes())
}

/// The shell frun was started from (its parent's name), else `$SHELL`'s name.
fn detected() -> String {
    let name = |p: &str| {
        std::path::Path::new(p.trim())
            .file_name()
            .map(|n| n.to_string_lossy().trim_start_matches('-').to_string())
    };
    let parent = std::fs::read_to_string(format!(
        "/proc/{}/comm",
        std::os::unix::process::parent_id()
    ))
    .ok()
    .and_then(|c| name(&c))
    .filter(|n| n == "bash" || n == "zsh");
    parent
        .or_else(|| std::env::var("SHELL").ok().and_then(|s| name(&s)))
        .unwrap_or_else(|| "bash".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every word the script completes is an option `frun parallel` reads (a completion for
    /// an option that is refused or unknown would lead the user astray).
    #[test]
    fn every_completed_option_is_one_frun_parallel_reads() {
        for name in super::super::SWITCHES.iter().chain(VALUED) {
            let mut o = super::super::fresh_options();
            let value = std::ffi::OsString::from("1");
            if let Err(Invocation::Refuse { message: m, .. }) =
                super::super::long_option(&mut o, name, None, Some(&value))
            {
                assert!(
                    !m.contains("unknown option") && !m.contains("not supported"),
                    "--{name}: {m}"
                );
            }
        }
    }

    #[test]
    fn bash_and_zsh_get_a_function_and_other_shells_a_refusal() {
        let text = |i: Invocation| match i {
            Invocation::Print(t) => String::from_utf8(t).unwrap(),
            _ => panic!("no script"),
        };
        let bash = text(script("bash"));
        assert!(
            bash.contains("complete -o default -o bashdefault -F _frun_parallel_complete parallel")
        );
        assert!(bash.contains("--termseq") && bash.contains("--ctag"));
        assert!(text(script("zsh")).starts_with("autoload -U +X bashcompinit && bashcompinit\n"));
        assert!(!matches!(script("fish"), Invocation::Print(_)));
    }
}
