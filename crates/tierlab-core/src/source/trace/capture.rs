//! Whether a captured program started. A program that could not run leaves
//! a log of its wrapper's or the loader's few requests (`sh -c nosuch`
//! under strace: three reads of ld.so.cache and libc, status 127): taken as
//! a trace it would be a short, wrong one, so `tierlab capture` refuses it.

use super::lines::Lines;
use super::strace::unquote;
use super::TraceError;
use std::collections::HashMap;
use std::path::Path;

/// What POSIX shells (and `env`, `nice`, `xargs`, valgrind) exit with when
/// the command they were to run was not found, or found but not executable
/// (POSIX.1-2017, Shell Command Language, 2.8.2 "Exit Status for Commands").
fn status_meaning(status: i32) -> Option<&'static str> {
    match status {
        127 => Some("command not found"),
        126 => Some("command not executable"),
        _ => None,
    }
}

/// The `execve`s of a strace log (`-f`, with `execve` traced): the first
/// (the program itself, which strace starts), how many succeeded, and the
/// last that failed.
#[derive(Debug, Default)]
struct Execs {
    first: Option<Exec>,
    started: u64,
    last_failed: Option<Exec>,
}

#[derive(Clone, Debug)]
struct Exec {
    path: String,
    /// `0`, or strace's error text (`ENOENT (No such file or directory)`).
    result: String,
}

impl Exec {
    fn failed(&self) -> bool {
        self.result != "0"
    }

    fn describe(&self) -> String {
        format!("execve({:?}) failed with {}", self.path, self.result)
    }
}

fn execs(log: &Path) -> Result<Execs, TraceError> {
    let mut lines = Lines::open(log, true)?;
    let mut out = Execs::default();
    // A call strace split with `<unfinished ...>`: its path, per pid.
    let mut unfinished: HashMap<String, String> = HashMap::new();
    while lines.next_line()? {
        let line = String::from_utf8_lossy(&lines.buf);
        if !line.contains("execve") {
            continue;
        }
        let mut fields = line.split_whitespace();
        let pid = fields.next().unwrap_or("").to_string();
        let call = line.find("execve").map_or("", |i| &line[i..]);
        let path = if call.starts_with("execve resumed>") {
            unfinished.remove(&pid).unwrap_or_else(|| "?".into())
        } else {
            // The first string argument: execve's path, or execveat's after
            // its directory descriptor.
            call.find('"')
                .and_then(|q| unquote(&call[q..]))
                .unwrap_or_else(|| "?".into())
        };
        if line.trim_end().ends_with("<unfinished ...>") {
            unfinished.insert(pid, path);
            continue;
        }
        let Some(eq) = line.rfind(" = ") else {
            continue;
        };
        let result = line[eq + 3..].trim();
        let exec = Exec {
            path,
            result: result.strip_prefix("-1 ").unwrap_or(result).to_string(),
        };
        if exec.failed() {
            out.last_failed = Some(exec.clone());
        } else {
            out.started += 1;
        }
        out.first.get_or_insert(exec);
    }
    Ok(out)
}

/// Why the program a tracer ran did not start (None: it did), from its
/// exit `status` and, for strace, the `execve` results in its `log`: the
/// program's own exec failed (a script whose interpreter is missing), or a
/// wrapper (`sh -c CMD`) exited 126/127 without starting any other
/// program. A program that ran and failed is not this: its capture stands.
pub fn start_failure(format: &str, log: &Path, status: i32) -> Result<Option<String>, TraceError> {
    if status == 0 {
        return Ok(None);
    }
    let meaning = status_meaning(status);
    if format != "strace" {
        // Lackey's log says nothing of execs: the status is all there is.
        return Ok(meaning.map(|m| format!("exit status {status} ({m}); nothing was captured")));
    }
    let e = execs(log)?;
    if let Some(first) = e.first.as_ref().filter(|x| x.failed()) {
        return Ok(Some(format!("cannot start: {}", first.describe())));
    }
    match meaning {
        Some(m) if e.started <= 1 => {
            let why = e
                .last_failed
                .map_or(String::new(), |x| format!(": {}", x.describe()));
            Ok(Some(format!(
                "exit status {status} ({m}) before any other program ran{why}; nothing was captured"
            )))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn failure(log: &str, status: i32) -> Option<String> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(log.as_bytes()).unwrap();
        start_failure("strace", f.path(), status).unwrap()
    }

    const SH: &str =
        "7 1.0 execve(\"/usr/bin/sh\", [...], 0x7fff8bcf5a50 /* 35 vars */) = 0\n7 1.1 read(3, \"\"..., 832) = 832\n";

    #[test]
    fn a_shell_that_found_no_command_is_a_failure() {
        let m = failure(SH, 127).unwrap();
        assert_eq!(
            m,
            "exit status 127 (command not found) before any other program ran; nothing was captured"
        );
        let log = format!(
            "{SH}8 1.2 execve(\"./nosuch\", [...], 0x5 /* 35 vars */ <unfinished ...>\n\
             8 1.3 <... execve resumed>) = -1 ENOENT (No such file or directory)\n"
        );
        let m = failure(&log, 127).unwrap();
        assert!(
            m.ends_with(": execve(\"./nosuch\") failed with ENOENT (No such file or directory); nothing was captured"),
            "{m}"
        );
        assert!(failure(SH, 126)
            .unwrap()
            .contains("(command not executable)"));
    }

    #[test]
    fn a_program_that_ran_and_failed_is_captured() {
        let log = format!("{SH}8 1.2 execve(\"/usr/bin/cat\", [...], 0x5 /* 35 vars */) = 0\n");
        assert_eq!(failure(&log, 127), None);
        assert_eq!(failure(SH, 1), None);
        assert_eq!(failure(SH, 0), None);
    }

    #[test]
    fn the_programs_own_exec_failing_is_a_failure() {
        let log = "9 1.0 execve(\"./bad.sh\", [...], 0x7ffe /* 35 vars */) = -1 ENOENT (No such file or directory)\n";
        assert_eq!(
            failure(log, 1).unwrap(),
            "cannot start: execve(\"./bad.sh\") failed with ENOENT (No such file or directory)"
        );
    }

    #[test]
    fn lackey_has_the_status_alone() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let m = start_failure("lackey", f.path(), 126).unwrap().unwrap();
        assert_eq!(
            m,
            "exit status 126 (command not executable); nothing was captured"
        );
        assert_eq!(start_failure("lackey", f.path(), 2).unwrap(), None);
    }
}
