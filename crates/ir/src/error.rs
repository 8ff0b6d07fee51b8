//! The errors of the IR layer: a parse error points at one character span; a
//! verifier report lists every problem found, each with its line.

use std::fmt;

/// A syntax error, with the span it was found at (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct ParseError {
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// Length of the offending span in characters (at least 1).
    pub length: u32,
    pub message: String,
}

/// One problem the verifier found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyProblem {
    pub file: String,
    pub line: u32,
    /// The kernel it was found in.
    pub kernel: String,
    pub message: String,
}

impl fmt::Display for VerifyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: in kernel `{}`: {}",
            self.file, self.line, self.kernel, self.message
        )
    }
}

/// Everything the verifier found wrong with a module, in source order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct VerifyError {
    pub problems: Vec<VerifyProblem>,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, problem) in self.problems.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}
