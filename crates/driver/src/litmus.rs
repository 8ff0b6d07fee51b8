//! `warpsim litmus`: runs a litmus test (`programs/litmus/*.litmus`) on the
//! machine in the explore memory model, many instances at a time, and
//! tallies the outcomes it produced beside those the PTX model allows.
//!
//! Each test becomes one PTX kernel (`kernel_ptx`): every instance of the
//! test has its own locations, 128 bytes apart as on hardware harnesses
//! (litmus7; Alglave et al., "GPU Concurrency: Weak Behaviours and
//! Programming Assumptions", ASPLOS 2015), and its threads sit at the
//! blocks, warps and lanes the test places them at; a launch runs many
//! instances side by side, and the launches of one run differ in their
//! seeds. The exhaustive mode runs one instance per launch, replaying every
//! sequence of the weak memory's choices in depth-first order
//! (`warpsim_machine::weak_memory::ChoiceSource`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use warpsim_ir as ir;
use warpsim_litmus::{LitmusTest, Observable, Outcome};
use warpsim_machine::memory::buffer_base;
use warpsim_machine::weak_memory::ChoiceSource;
use warpsim_machine::{GlobalMemory, Launch, MachineConfig, Program, RunControl, RunOptions};

/// Bytes between two locations of one instance, and between instances: a
/// line each, so that no two locations share a cache line.
const LOCATION_STRIDE: u64 = 128;

/// Registers a litmus thread may use (`r0`..`r15`).
const REGISTERS: usize = 16;

/// What went wrong running a litmus test.
#[derive(Debug, thiserror::Error)]
pub enum LitmusRunError {
    #[error("{test}: the generated kernel does not compile: {message}")]
    Kernel { test: String, message: String },
    #[error("{test}: the launch failed: {message}")]
    Launch { test: String, message: String },
    #[error(
        "{test}: the exhaustive mode needs more than {bound} runs; give a larger --bound or use the explore mode"
    )]
    TooManyRuns { test: String, bound: u64 },
}

/// A litmus test ready to run: its kernel, and the shape of a launch.
pub struct LitmusKernel<'a> {
    test: &'a LitmusTest,
    program: Program,
    blocks_per_instance: u32,
    threads_per_block: u32,
}

/// How many instances of a test one launch runs in the explore mode.
pub const INSTANCES_PER_LAUNCH: u32 = 64;

impl<'a> LitmusKernel<'a> {
    /// Compiles `test` into its kernel.
    pub fn new(test: &'a LitmusTest) -> Result<Self, LitmusRunError> {
        let blocks_per_instance = test
            .threads
            .iter()
            .map(|thread| thread.placement.block + 1)
            .max()
            .unwrap_or(1);
        let threads_per_block = test
            .threads
            .iter()
            .map(|thread| (thread.placement.warp + 1) * 32)
            .max()
            .unwrap_or(32);
        let text = kernel_ptx(test, blocks_per_instance);
        let refuse = |message: String| LitmusRunError::Kernel {
            test: test.name.clone(),
            message,
        };
        let module =
            ir::parse_ptx(&test.name, &text).map_err(|error| refuse(format!("{error:?}")))?;
        ir::verify_module(&module).map_err(|error| refuse(format!("{error:?}")))?;
        let kernel = module
            .kernel("litmus")
            .ok_or_else(|| refuse("no kernel `litmus`".to_string()))?;
        let program =
            Program::lower(&module, kernel).map_err(|error| refuse(format!("{error:?}")))?;
        Ok(LitmusKernel {
            test,
            program,
            blocks_per_instance,
            threads_per_block,
        })
    }

    /// Runs `instances` instances in one launch with the weak memory's
    /// choices from `choices`; returns each instance's outcome and the
    /// choices made.
    fn launch(
        &self,
        config: &MachineConfig,
        instances: u32,
        choices: ChoiceSource,
    ) -> Result<(Vec<Outcome>, ChoiceSource), LitmusRunError> {
        let test = self.test;
        let locations = test.locations.len() as u64;
        let mut memory = GlobalMemory::new();
        let mut initial = Vec::new();
        for _ in 0..instances {
            for location in &test.locations {
                let mut line = vec![0u8; LOCATION_STRIDE as usize];
                line[..4].copy_from_slice(&location.init.to_le_bytes());
                initial.extend_from_slice(&line);
            }
        }
        let location_buffer = memory.add_buffer("locations", &initial);
        let result_words = instances as usize * test.threads.len() * REGISTERS;
        let result_buffer = memory.add_buffer("results", &vec![0u8; result_words * 4]);
        let mut params = Vec::new();
        params.extend_from_slice(&buffer_base(location_buffer).to_le_bytes());
        params.extend_from_slice(&buffer_base(result_buffer).to_le_bytes());
        let launch = Launch {
            grid: [instances * self.blocks_per_instance, 1, 1],
            block: [self.threads_per_block, 1, 1],
            dynamic_shared_bytes: 0,
            params,
            global_variable_addresses: Vec::new(),
            registers_per_thread: Some(32),
        };
        let options = RunOptions {
            host_threads: 1,
            ..RunOptions::default()
        };
        let (outcome, choices) = warpsim_machine::run_exploring(
            &self.program,
            &launch,
            &memory,
            config,
            options,
            &RunControl::default(),
            choices,
        )
        .map_err(|error| LitmusRunError::Launch {
            test: test.name.clone(),
            message: error.message,
        })?;
        if let Some(error) = outcome.error {
            return Err(LitmusRunError::Launch {
                test: test.name.clone(),
                message: format!("block {:?}: {:?}", error.block, error.kind),
            });
        }
        let location_bytes = memory.contents(location_buffer);
        let result_bytes = memory.contents(result_buffer);
        let word = |bytes: &[u8], index: usize| {
            u32::from_le_bytes(bytes[index * 4..index * 4 + 4].try_into().unwrap_or([0; 4]))
        };
        let observables = test.observables();
        let outcomes = (0..instances as usize)
            .map(|instance| {
                let values = observables
                    .iter()
                    .map(|observable| match *observable {
                        Observable::Register { thread, register } => word(
                            &result_bytes,
                            (instance * test.threads.len() + thread.0 as usize) * REGISTERS
                                + register.0 as usize,
                        ),
                        Observable::Location(location) => word(
                            &location_bytes,
                            ((instance as u64 * locations + u64::from(location.0))
                                * LOCATION_STRIDE
                                / 4) as usize,
                        ),
                    })
                    .collect();
                Outcome(values)
            })
            .collect();
        Ok((outcomes, choices))
    }
}

/// Runs `launches` launches of [`INSTANCES_PER_LAUNCH`] instances each,
/// launch `k` with seed `seed + k`; returns how often each outcome came.
pub fn explore(
    kernel: &LitmusKernel,
    config: &MachineConfig,
    launches: u32,
    seed: u64,
) -> Result<BTreeMap<Outcome, u64>, LitmusRunError> {
    let mut histogram = BTreeMap::new();
    for launch in 0..launches {
        let launch_seed = seed.wrapping_add(u64::from(launch));
        let (outcomes, _) = kernel.launch(
            config,
            INSTANCES_PER_LAUNCH,
            ChoiceSource::seeded(launch_seed),
        )?;
        for outcome in outcomes {
            *histogram.entry(outcome).or_insert(0) += 1;
        }
    }
    Ok(histogram)
}

/// Every outcome the machine's explore model can reach for one instance,
/// with how many runs reached it, by enumerating the weak memory's choices
/// (and a few start times per block); at most `bound` runs.
pub fn exhaustive(
    kernel: &LitmusKernel,
    config: &MachineConfig,
    bound: u64,
) -> Result<BTreeMap<Outcome, u64>, LitmusRunError> {
    let mut histogram = BTreeMap::new();
    let mut prefix = Some(Vec::new());
    let mut runs = 0u64;
    while let Some(next) = prefix {
        if runs == bound {
            return Err(LitmusRunError::TooManyRuns {
                test: kernel.test.name.clone(),
                bound,
            });
        }
        runs += 1;
        let (outcomes, choices) = kernel.launch(config, 1, ChoiceSource::replaying(next))?;
        for outcome in outcomes {
            *histogram.entry(outcome).or_insert(0) += 1;
        }
        prefix = choices.next_prefix();
    }
    Ok(histogram)
}

/// The PTX kernel of `test`: each instance's locations and result slots
/// from its block index, then each thread's body under a branch on its
/// place, then its registers stored.
pub fn kernel_ptx(test: &LitmusTest, blocks_per_instance: u32) -> String {
    let mut ptx = String::new();
    let location_count = test.locations.len() as u64;
    let thread_count = test.threads.len() as u64;
    let _ = writeln!(
        ptx,
        "// The litmus test {}, generated by warpsim.",
        test.name
    );
    ptx.push_str(".version 7.8\n.target sm_90\n.address_size 64\n\n");
    ptx.push_str(
        ".visible .entry litmus(.param .u64 litmus_locations, .param .u64 litmus_results)\n{\n",
    );
    let _ = writeln!(ptx, "    .reg .b32 r<{REGISTERS}>;");
    for location in &test.locations {
        let _ = writeln!(ptx, "    .reg .u64 %litmus_location_{};", location.name);
    }
    ptx.push_str("    .reg .u64 %litmus_base, %litmus_results, %litmus_offset;\n");
    ptx.push_str("    .reg .u32 %litmus_tid, %litmus_ctaid, %litmus_instance, %litmus_block;\n");
    ptx.push_str("    .reg .pred %litmus_here;\n");
    ptx.push_str("    ld.param.u64 %litmus_base, [litmus_locations];\n");
    ptx.push_str("    ld.param.u64 %litmus_results, [litmus_results];\n");
    ptx.push_str("    mov.u32 %litmus_tid, %tid.x;\n    mov.u32 %litmus_ctaid, %ctaid.x;\n");
    let _ = writeln!(
        ptx,
        "    div.u32 %litmus_instance, %litmus_ctaid, {blocks_per_instance};"
    );
    let _ = writeln!(
        ptx,
        "    rem.u32 %litmus_block, %litmus_ctaid, {blocks_per_instance};"
    );
    let _ = writeln!(
        ptx,
        "    mul.wide.u32 %litmus_offset, %litmus_instance, {};",
        location_count * LOCATION_STRIDE
    );
    ptx.push_str("    add.u64 %litmus_base, %litmus_base, %litmus_offset;\n");
    for (index, location) in test.locations.iter().enumerate() {
        let _ = writeln!(
            ptx,
            "    add.u64 %litmus_location_{}, %litmus_base, {};",
            location.name,
            index as u64 * LOCATION_STRIDE
        );
    }
    let _ = writeln!(
        ptx,
        "    mul.wide.u32 %litmus_offset, %litmus_instance, {};",
        thread_count * REGISTERS as u64 * 4
    );
    ptx.push_str("    add.u64 %litmus_results, %litmus_results, %litmus_offset;\n");
    for register in 0..REGISTERS {
        let _ = writeln!(ptx, "    mov.b32 r{register}, 0;");
    }
    for (index, thread) in test.threads.iter().enumerate() {
        let place = thread.placement;
        let _ = writeln!(
            ptx,
            "    setp.eq.u32 %litmus_here, %litmus_block, {};",
            place.block
        );
        let _ = writeln!(
            ptx,
            "    setp.eq.and.u32 %litmus_here, %litmus_tid, {}, %litmus_here;",
            place.warp * 32 + place.lane
        );
        let _ = writeln!(ptx, "    @%litmus_here bra LITMUS_THREAD_{index};");
    }
    ptx.push_str("    ret;\n");
    for (index, thread) in test.threads.iter().enumerate() {
        let _ = writeln!(ptx, "LITMUS_THREAD_{index}:");
        for instruction in &thread.instructions {
            let _ = writeln!(
                ptx,
                "    {}",
                with_location_registers(test, &instruction.text)
            );
        }
        let base = index * REGISTERS * 4;
        for register in 0..REGISTERS {
            let _ = writeln!(
                ptx,
                "    st.global.u32 [%litmus_results+{}], r{register};",
                base + register * 4
            );
        }
        ptx.push_str("    ret;\n");
    }
    ptx.push_str("}\n");
    ptx
}

/// `text` with each `[location]` address replaced by the register that
/// holds the location's address.
fn with_location_registers(test: &LitmusTest, text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let name = after[..close].trim();
        if test.locations.iter().any(|location| location.name == name) {
            let _ = write!(out, "[%litmus_location_{name}]");
        } else {
            out.push_str(&rest[open..open + close + 2]);
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The outcomes of a run beside the model's: each seen outcome with its
/// count, marked allowed or forbidden, and the allowed ones not seen.
pub struct Verdict {
    pub seen: BTreeMap<Outcome, u64>,
    pub allowed: BTreeSet<Outcome>,
}

impl Verdict {
    /// Outcomes seen that the model forbids.
    pub fn forbidden_seen(&self) -> Vec<&Outcome> {
        self.seen
            .keys()
            .filter(|outcome| !self.allowed.contains(outcome))
            .collect()
    }

    /// Outcomes the model allows that were not seen.
    pub fn allowed_unseen(&self) -> Vec<&Outcome> {
        self.allowed
            .iter()
            .filter(|outcome| !self.seen.contains_key(outcome))
            .collect()
    }

    /// The histogram as herd7 and litmus7 print theirs.
    pub fn render(&self, test: &LitmusTest, runs_label: &str) -> String {
        let mut out = String::new();
        let total: u64 = self.seen.values().sum();
        let _ = writeln!(out, "Test {} ({runs_label})", test.name);
        let _ = writeln!(out, "Histogram ({} states)", self.seen.len());
        for (outcome, count) in &self.seen {
            let mark = if test.matches_exists(outcome) {
                '*'
            } else {
                ':'
            };
            let verdict = if self.allowed.contains(outcome) {
                "allowed"
            } else {
                "FORBIDDEN"
            };
            let _ = writeln!(
                out,
                "{count:<8}{mark}> {}  ({verdict})",
                test.describe(outcome)
            );
        }
        for outcome in self.allowed_unseen() {
            let mark = if test.matches_exists(outcome) {
                '*'
            } else {
                ':'
            };
            let _ = writeln!(
                out,
                "{:<8}{mark}> {}  (allowed, not seen)",
                0,
                test.describe(outcome)
            );
        }
        let exists_seen: u64 = self
            .seen
            .iter()
            .filter(|(outcome, _)| test.matches_exists(outcome))
            .map(|(_, count)| count)
            .sum();
        let exists_allowed = self
            .allowed
            .iter()
            .any(|outcome| test.matches_exists(outcome));
        let _ = writeln!(
            out,
            "Exists: {} by the PTX model; seen {exists_seen} of {total}",
            if exists_allowed {
                "allowed"
            } else {
                "forbidden"
            }
        );
        let forbidden = self.forbidden_seen().len();
        let _ = writeln!(
            out,
            "{}",
            if forbidden > 0 {
                format!("Wrong: {forbidden} outcomes the model forbids were produced")
            } else {
                "Sound: every outcome produced is allowed".to_string()
            }
        );
        out
    }
}
