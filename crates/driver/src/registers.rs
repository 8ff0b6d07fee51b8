//! Registers per thread of a launch, which decide occupancy and which PTX
//! does not say: the launch file's `registers = N` first; else what
//! nvJitLink reports for the PTX compiled for the target (`.ptx` and `.cu`
//! programs); else the machine file's `timing.default_registers_per_thread`,
//! with a note saying why.

use std::fmt;

use serde::Serialize;

use crate::nvjitlink::{self, KernelResources, LinkError};

/// Where a launch's registers per thread come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RegisterSource {
    /// The launch file's `registers = N`.
    #[serde(rename = "launch file")]
    LaunchFile,
    /// nvJitLink's count for the kernel's PTX compiled for the target.
    #[serde(rename = "nvJitLink")]
    JitLink,
    /// the machine file's `timing.default_registers_per_thread` (32 on
    /// Hopper: the most at which every thread slot of an SM can be filled,
    /// so that the default never limits occupancy).
    #[serde(rename = "default")]
    Default,
}

impl RegisterSource {
    /// As reports write it: `launch file`, `nvJitLink`, `default`.
    pub fn name(self) -> &'static str {
        match self {
            RegisterSource::LaunchFile => "launch file",
            RegisterSource::JitLink => "nvJitLink",
            RegisterSource::Default => "default",
        }
    }
}

impl fmt::Display for RegisterSource {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A launch's registers per thread and where they come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registers {
    pub count: u32,
    pub source: RegisterSource,
    /// Why the default applies, for reports to show (`None` otherwise).
    pub note: Option<String>,
}

/// The PTX of a launch's kernel, for nvJitLink to compile.
pub struct KernelPtx<'a> {
    /// The whole PTX module.
    pub text: &'a str,
    /// The kernel's PTX name (mangled for C++ kernels).
    pub kernel: &'a str,
}

/// Resolves a launch's registers per thread: `from_launch_file` when the
/// launch file gives them, else nvJitLink's count for `ptx` compiled for
/// `compute_capability` (`None` for `.kir` programs, which have no PTX),
/// else the default. Also returns everything nvJitLink reported of the
/// kernel, when it ran. Falling back to the default on PTX logs a warning;
/// a `.kir` program without `registers` gets the default quietly, with a
/// note.
pub fn resolve(
    from_launch_file: Option<u32>,
    ptx: Option<KernelPtx>,
    compute_capability: u32,
    default_count: u32,
) -> (Registers, Option<KernelResources>) {
    if let Some(count) = from_launch_file {
        return (
            Registers {
                count,
                source: RegisterSource::LaunchFile,
                note: None,
            },
            None,
        );
    }
    let default = |note: String| Registers {
        count: default_count,
        source: RegisterSource::Default,
        note: Some(note),
    };
    let Some(ptx) = ptx else {
        let note = format!(
            "a .kir program has no PTX for nvJitLink to compile: \
             {default_count} registers per thread assumed \
             (`registers = N` in the launch file sets them)"
        );
        tracing::info!("{note}");
        return (default(note), None);
    };
    let architecture = nvjitlink::architecture(compute_capability);
    match nvjitlink::kernel_resources(ptx.text, ptx.kernel, &architecture) {
        Ok(resources) => {
            tracing::info!(
                kernel = ptx.kernel,
                %architecture,
                ?resources,
                "registers per thread from nvJitLink"
            );
            (
                Registers {
                    count: resources.registers,
                    source: RegisterSource::JitLink,
                    note: None,
                },
                Some(resources),
            )
        }
        Err(error) => {
            let why = match &error {
                // The log can be long: its first lines say what failed.
                LinkError::Failed { architecture, log } => format!(
                    "nvJitLink could not compile the PTX for {architecture}: {}",
                    log.lines().take(3).collect::<Vec<_>>().join("; ")
                ),
                other => other.to_string(),
            };
            let note = format!(
                "{why}; {default_count} registers per thread assumed \
                 (`registers = N` in the launch file sets them)"
            );
            tracing::warn!("{note}");
            (default(note), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_file_wins_without_compiling_anything() {
        // PTX nvJitLink would reject: it is never compiled.
        let ptx = KernelPtx {
            text: "not PTX",
            kernel: "k",
        };
        let (registers, resources) = resolve(Some(40), Some(ptx), 90, 32);
        assert_eq!(
            registers,
            Registers {
                count: 40,
                source: RegisterSource::LaunchFile,
                note: None
            }
        );
        assert_eq!(resources, None);
    }

    #[test]
    fn kir_programs_get_the_default_with_a_note() {
        let (registers, resources) = resolve(None, None, 90, 24);
        assert_eq!(registers.count, 24);
        assert_eq!(registers.source, RegisterSource::Default);
        assert!(registers
            .note
            .is_some_and(|note| note.starts_with("a .kir program has no PTX")));
        assert_eq!(resources, None);
    }

    #[test]
    fn sources_are_named_as_reports_write_them() {
        let names: Vec<String> = [
            RegisterSource::LaunchFile,
            RegisterSource::JitLink,
            RegisterSource::Default,
        ]
        .iter()
        .map(|source| serde_json::to_string(source).unwrap() + " " + source.name())
        .collect();
        assert_eq!(
            names,
            [
                "\"launch file\" launch file",
                "\"nvJitLink\" nvJitLink",
                "\"default\" default"
            ]
        );
    }
}
