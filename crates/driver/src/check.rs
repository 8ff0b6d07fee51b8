//! The barrier checker's findings as a user sees them: source lines instead
//! of instruction indices, thread ranges instead of lane masks, rendered
//! like a compiler's diagnostics (a snippet, carets, notes) and serialised
//! into the JSON report's `findings` list. Findings come from two places:
//! the static uniformity analysis of the IR (`warpsim_ir::uniformity`,
//! before anything runs) and the machine's dynamic checker.

use indexmap::IndexMap;
use serde::Serialize;
use warpsim_ir::{Kernel, Module};
use warpsim_machine::findings::{thread_ranges, Finding};
pub use warpsim_machine::findings::{FindingKind, Severity};

use crate::diagnostics::{self, Sources};
use crate::locations::{InlinedFrom, Locations, Place};

/// A place a finding points at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SiteReport {
    pub file: String,
    pub line: u32,
    /// For a loop, its last line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_line: Option<u32>,
    /// Thread ranges (linear thread index in the block, x fastest); empty
    /// for static findings.
    pub threads: String,
    pub label: String,
    pub primary: bool,
    /// Where inside a device function or header the code at this line came
    /// from, innermost first (absent when it was not inlined).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inlined_from: Vec<InlinedFrom>,
}

/// One finding of the JSON report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FindingReport {
    pub kind: FindingKind,
    pub severity: Severity,
    /// Where the finding is: its first primary site.
    pub file: String,
    pub line: u32,
    /// Where inside a device function or header the primary site's code came
    /// from, innermost first (absent when it was not inlined).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inlined_from: Vec<InlinedFrom>,
    /// The first block that had it (`null` for static findings).
    pub block: Option<[u32; 3]>,
    /// How many blocks had it.
    pub blocks: u64,
    /// The next few blocks that had it, after `block`.
    pub other_blocks: Vec<[u32; 3]>,
    /// The threads of its primary sites, as ranges.
    pub threads: String,
    pub message: String,
    pub sites: Vec<SiteReport>,
    pub notes: Vec<String>,
}

impl FindingReport {
    /// A machine finding, with instruction indices turned into source lines
    /// by `file_of`.
    pub fn from_machine(finding: &Finding, place_of: &dyn Fn(u32) -> Place) -> FindingReport {
        let sites: Vec<SiteReport> = finding
            .sites
            .iter()
            .map(|site| {
                let place = place_of(site.pc);
                let last_line = site
                    .last_pc
                    .map(|pc| place_of(pc).line)
                    .filter(|&last| last > place.line);
                SiteReport {
                    file: place.file,
                    line: place.line,
                    last_line,
                    threads: thread_ranges(&site.threads),
                    label: site.label.clone(),
                    primary: site.primary,
                    inlined_from: place.inlined_from,
                }
            })
            .collect();
        let primary = sites.iter().find(|site| site.primary).or(sites.first());
        let (file, line, inlined_from) = primary.map_or((String::new(), 0, Vec::new()), |site| {
            (site.file.clone(), site.line, site.inlined_from.clone())
        });
        FindingReport {
            kind: finding.kind,
            severity: finding.severity,
            file,
            line,
            inlined_from,
            block: Some(finding.block),
            blocks: finding.blocks,
            other_blocks: finding.other_blocks.clone(),
            threads: thread_ranges(&finding.primary_threads()),
            message: finding.message.clone(),
            sites,
            notes: finding.notes.clone(),
        }
    }
}

/// Merges findings that say the same thing at the same source lines: the
/// compiler copies code (unrolled loops, inlined functions), so one CUDA
/// line can stand for several instructions, and a barrier in a loop has a
/// phase per round. The first is kept, with a note of how many it stands for.
pub fn merge_by_line(findings: Vec<FindingReport>) -> Vec<FindingReport> {
    let key = |finding: &FindingReport| {
        let mut lines: Vec<(String, u32)> = finding
            .sites
            .iter()
            .map(|site| (site.file.clone(), site.line))
            .collect();
        lines.sort();
        lines.dedup();
        (finding.kind, finding.severity, lines)
    };
    // Keyed by what makes two findings the same, in the order first seen.
    let mut merged: IndexMap<_, (FindingReport, usize)> = IndexMap::new();
    for finding in findings {
        match merged.entry(key(&finding)) {
            indexmap::map::Entry::Occupied(mut entry) => {
                let (kept, count) = entry.get_mut();
                *count += 1;
                kept.blocks = kept.blocks.max(finding.blocks);
            }
            indexmap::map::Entry::Vacant(entry) => {
                entry.insert((finding, 1));
            }
        }
    }
    merged
        .into_values()
        .map(|(mut finding, count)| {
            if count > 1 {
                finding.notes.push(format!(
                    "found {count} times at these lines (copies of the code the compiler made, or phases of a barrier in a loop); the first is shown"
                ));
            }
            finding
        })
        .collect()
}

/// The static findings of `kernel`: the block barriers that the uniformity
/// analysis (`warpsim_ir::uniformity::divergent_barriers`) finds reachable by
/// control flow that differs between threads.
pub fn static_findings(
    module: &Module,
    locations: &Locations,
    kernel: &Kernel,
    divergent: &[warpsim_ir::uniformity::DivergentBarrier],
) -> Vec<FindingReport> {
    let place_of =
        |instr: warpsim_ir::InstrId| locations.place(module, kernel.instrs[instr.index()].loc);
    let findings = divergent
        .iter()
        .map(|finding| {
            let barrier = place_of(finding.barrier);
            let branch = place_of(finding.branch);
            let (file, line, inlined_from) =
                (barrier.file.clone(), barrier.line, barrier.inlined_from.clone());
            let mut sites = vec![SiteReport {
                file: barrier.file,
                line: barrier.line,
                last_line: None,
                threads: String::new(),
                label: "this barrier may be reached by some threads of a block and not by others"
                    .to_string(),
                primary: true,
                inlined_from: barrier.inlined_from,
            }];
            if finding.branch != finding.barrier {
                sites.push(SiteReport {
                    file: branch.file,
                    line: branch.line,
                    last_line: None,
                    threads: String::new(),
                    label: format!(
                        "this branch depends on {}, which can differ between the threads of a block",
                        finding.reason
                    ),
                    primary: false,
                    inlined_from: branch.inlined_from,
                });
            }
            FindingReport {
                kind: FindingKind::NonUniformBarrier,
                severity: Severity::Warning,
                file,
                line,
                inlined_from,
                block: None,
                blocks: 0,
                other_blocks: Vec::new(),
                threads: String::new(),
                message: "barrier reachable by non-uniform control flow: `__syncthreads()` must be reached by every thread of the block or by none".to_string(),
                sites,
                notes: if finding.skipped_by_exit {
                    vec!["the threads that do not reach it exit, and nothing after it needs it; \
                          Volta and later GPUs (and compute-sanitizer's synccheck) let the exits \
                          complete it, but CUDA leaves a barrier in code that threads of a block \
                          take differently undefined"
                        .to_string()]
                } else {
                    Vec::new()
                },
            }
        })
        .collect();
    merge_by_line(findings)
}

/// A finding as a compiler would print it.
pub fn render_finding(finding: &FindingReport, sources: &mut Sources) -> String {
    let title = format!("[{}] {}", finding.kind.name(), finding.message);
    let mut labels = Vec::new();
    for site in &finding.sites {
        let threads = if site.threads.is_empty() {
            String::new()
        } else if site.threads.parse::<u32>().is_ok() {
            format!(" (thread {})", site.threads)
        } else {
            format!(" (threads {})", site.threads)
        };
        labels.push(diagnostics::LineLabel {
            file: site.file.clone(),
            line: site.line,
            last_line: site.last_line,
            message: format!("{}{threads}", site.label),
            primary: site.primary,
        });
    }
    let mut notes = Vec::new();
    if let Some(block) = finding.block {
        let mut named: Vec<String> = finding
            .other_blocks
            .iter()
            .map(|[x, y, z]| format!("({x},{y},{z})"))
            .collect();
        if finding.blocks > 1 + named.len() as u64 {
            named.push("…".to_string());
        }
        let more = match finding.blocks {
            0 | 1 => String::new(),
            2 => format!(" and 1 other block, {}", named.join(", ")),
            n => format!(" and {} other blocks: {}", n - 1, named.join(", ")),
        };
        notes.push(format!(
            "in block ({},{},{}){more}",
            block[0], block[1], block[2]
        ));
    }
    // Code inlined from a device function or a header: where it came from.
    for site in &finding.sites {
        if site.inlined_from.is_empty() {
            continue;
        }
        let place = Place {
            file: site.file.clone(),
            line: site.line,
            inlined_from: site.inlined_from.clone(),
        };
        if let Some(note) = place.inlined_note() {
            let note = format!("{}:{}: {note}", site.file, site.line);
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    notes.extend(finding.notes.iter().cloned());
    diagnostics::render_lines(
        sources,
        finding.severity == Severity::Error,
        &title,
        &labels,
        &notes,
    )
}

/// The last line of `warpsim check`: what was found.
pub fn summary(kernel: &str, findings: &[FindingReport]) -> String {
    let errors = findings
        .iter()
        .filter(|finding| finding.severity == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    let plural =
        |count: usize, word: &str| format!("{count} {word}{}", if count == 1 { "" } else { "s" });
    if findings.is_empty() {
        format!("check: kernel `{kernel}`: no barrier, warp-sync, uninitialized-memory or race problems found\n")
    } else {
        format!(
            "check: kernel `{kernel}`: {}, {}\n",
            plural(errors, "error"),
            plural(warnings, "warning")
        )
    }
}

/// What `warpsim check` prints about a launch, and whether it failed.
pub struct CheckOutcome {
    /// Static findings, then dynamic ones.
    pub findings: Vec<FindingReport>,
    /// Every finding rendered, a fault no finding covers, and the summary line.
    pub text: String,
    /// Whether an error was found (or the kernel failed otherwise).
    pub failed: bool,
}

impl crate::PreparedLaunch {
    /// Runs the launch with the barrier and initialization checkers: the
    /// static findings, then the dynamic ones; the run's report carries them
    /// all.
    pub fn check(
        &self,
        host_threads: usize,
    ) -> Result<(crate::RunResult, CheckOutcome), crate::InputError> {
        // A checker runs every block, past faults: the findings of all of
        // them are what it is for.
        let control = crate::RunControl {
            keep_going: true,
            ..Default::default()
        };
        let options = crate::RunOptions {
            host_threads,
            ..crate::RunOptions::default()
        };
        self.check_with(options, &control)
    }

    /// [`crate::PreparedLaunch::check`] as `options` say (host threads, the
    /// timeline; the initialization checker runs whatever they say),
    /// watched and stopped through `control`.
    pub fn check_with(
        &self,
        options: crate::RunOptions,
        control: &crate::RunControl,
    ) -> Result<(crate::RunResult, CheckOutcome), crate::InputError> {
        let options = crate::RunOptions {
            check_initialization: true,
            check_races: true,
            ..options
        };
        let mut result = self.run_machine(options, control)?;
        let mut findings = self.static_findings();
        findings.extend(merge_by_line(result.findings.clone()));
        result.report.findings = Some(findings.clone());
        let mut sources = self.sources();
        let mut text = String::new();
        for finding in &findings {
            text.push_str(&render_finding(finding, &mut sources));
        }
        let mut failed = findings
            .iter()
            .any(|finding| finding.severity == Severity::Error);
        if let Some(failure) = &result.failure {
            if !result.failure_is_finding {
                text.push_str(failure);
            }
            failed = true;
        }
        text.push_str(&summary(&self.kernel_name, &findings));
        Ok((
            result,
            CheckOutcome {
                findings,
                text,
                failed,
            },
        ))
    }
}
