//! `frun parallel --pipe --group-by COLUMN`: which part of a line GNU Parallel groups lines
//! by (a column number; columns split at `--colsep`, a tab unless given), turned into the
//! engine's batches of groups.
//!
//! It only reads the option's values; it reads no input and must not look at other `--pipe`
//! options.

use frun_engine::input::group::{GroupKey, MAX_SEPARATOR};
use frun_engine::plan::config::BatchSpec;

/// The batches of `--pipe --group-by value`: `per_job` groups per job (`-N`), else about
/// `block` bytes of whole groups. Column names and perl expressions are refused, and so is a
/// `--colsep` that is a regular expression rather than a plain string.
pub(in crate::parallel) fn batches(
    value: &str,
    colsep: Option<&str>,
    per_job: Option<u64>,
    block: u64,
) -> Result<BatchSpec, String> {
    let column = value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|&c| c > 0)
        .ok_or_else(|| {
            format!(
                "--group-by '{value}': only a column number is supported (not a column name or a perl expression)"
            )
        })?;
    let separator = colsep.unwrap_or("\t");
    if separator.bytes().any(|b| b"\\^$.|?*+()[]{}".contains(&b)) {
        return Err(format!(
            "--group-by with --colsep '{separator}': only a plain string separates columns (not a regular expression)"
        ));
    }
    let key = GroupKey::new(column, separator.as_bytes())
        .ok_or_else(|| format!("--group-by: --colsep must be 1 to {MAX_SEPARATOR} bytes"))?;
    Ok(BatchSpec::Groups {
        bytes: block,
        per_job: per_job.unwrap_or(0),
        key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_only() {
        let key = GroupKey::new(2, b",").unwrap();
        assert_eq!(
            batches("2", Some(","), Some(1), 9),
            Ok(BatchSpec::Groups {
                bytes: 9,
                per_job: 1,
                key
            })
        );
        let tab = GroupKey::new(1, b"\t").unwrap();
        assert_eq!(
            batches("1", None, None, 9),
            Ok(BatchSpec::Groups {
                bytes: 9,
                per_job: 0,
                key: tab
            })
        );
        assert!(batches("UserID", Some(","), None, 9).is_err());
        assert!(batches("0", Some(","), None, 9).is_err());
        assert!(batches("1", Some("\\s+"), None, 9).is_err());
    }
}
