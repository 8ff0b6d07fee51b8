//! The PTX subset of litmus-test bodies: one instruction per line, decoded into an [`Event`].
//!
//! The syntax follows the PTX ISA ("Instruction Set": `ld`, `st`, `atom`, `red`, `fence`,
//! `membar`, `bar`), restricted to what a memory-model litmus test needs: 32-bit unsigned values
//! (`.u32` or `.b32`), the `.global` state space, registers `r0` to `r15` and addresses that name
//! a declared location, `[x]`. Anything else is rejected with a reason rather than guessed at,
//! because a litmus test that silently means something else than it says is worse than none.
//!
//! Supported forms (`S` is a scope: `cta`, `cluster`, `gpu` or `sys`):
//!
//! - `ld{.weak|.volatile|.relaxed.S|.acquire.S}.global.{u32|b32} rN, [loc];`
//! - `st{.weak|.volatile|.relaxed.S|.release.S}.global.{u32|b32} [loc], VALUE;`
//! - `atom{.relaxed|.acquire|.release|.acq_rel}{.S}.global.OP.{u32|b32} rN, [loc], A{, B};`
//!   with OP one of `add exch cas or and xor max min inc dec` (`cas` takes compare, new); the
//!   PTX defaults are `.relaxed` and `.gpu`.
//! - `red{.relaxed|.release}{.S}.global.OP.{u32|b32} [loc], A;` (no `exch` or `cas`; `red` has
//!   no acquire form).
//! - `fence.sc.S;`, `fence.acq_rel.S;`, `fence.S;` (= `fence.acq_rel.S`), `membar.cta;`
//!   (= `fence.sc.cta`), `membar.gl;` (= `fence.sc.gpu`), `membar.sys;` (= `fence.sc.sys`).
//! - `bar.sync 0;` (also `bar.cta.sync 0;`, `barrier.sync 0;`, `barrier.cta.sync 0;` and their
//!   `.aligned` forms).
//!
//! VALUE, A and B are a register or an integer literal (decimal or `0x` hexadecimal; a negative
//! literal stands for its 32-bit two's complement). Registers may be written `r3` or `%r3`.

use crate::error::LitmusErrorKind;
use crate::litmus_test::{
    AccessOrder, Event, FenceKind, Location, LocationId, Register, RmwOp, RmwOrder, RmwSemantics,
    Scope, Value,
};

/// Decodes one instruction line (comments already removed) into its event.
pub fn parse_instruction(text: &str, locations: &[Location]) -> Result<Event, LitmusErrorKind> {
    let parser = LineParser { text, locations };
    parser.parse()
}

/// Parses a register operand: `r0` to `r15`, optionally written with PTX's `%`.
pub fn parse_register(token: &str) -> Result<Register, LitmusErrorKind> {
    let bad = || LitmusErrorKind::BadRegister {
        text: token.to_string(),
    };
    let name = token.strip_prefix('%').unwrap_or(token);
    let digits = name.strip_prefix('r').ok_or_else(bad)?;
    let well_formed = !digits.is_empty()
        && digits.bytes().all(|byte| byte.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if !well_formed {
        return Err(bad());
    }
    match digits.parse::<u8>() {
        Ok(number) if number < Register::COUNT => Ok(Register(number)),
        _ => Err(bad()),
    }
}

/// Parses an integer literal into its 32-bit pattern, or `None` when it is not one.
pub fn parse_literal(token: &str) -> Option<u32> {
    let (negative, magnitude_text) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token),
    };
    let magnitude = if let Some(hex) = magnitude_text
        .strip_prefix("0x")
        .or_else(|| magnitude_text.strip_prefix("0X"))
    {
        if hex.is_empty() || !hex.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(hex, 16).ok()?
    } else {
        if magnitude_text.is_empty() || !magnitude_text.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        magnitude_text.parse::<u64>().ok()?
    };
    if negative {
        // A negative literal is accepted down to i32::MIN and stands for its two's complement.
        if magnitude > 1 << 31 {
            return None;
        }
        Some((magnitude as u32).wrapping_neg())
    } else {
        u32::try_from(magnitude).ok()
    }
}

/// Whether `name` is a valid location name: a letter or `_`, then letters, digits or `_`.
pub fn is_identifier(name: &str) -> bool {
    let mut characters = name.chars();
    matches!(characters.next(), Some(first) if first.is_ascii_alphabetic() || first == '_')
        && characters.all(|character| character.is_ascii_alphanumeric() || character == '_')
}

fn parse_scope(qualifier: &str) -> Option<Scope> {
    match qualifier {
        "cta" => Some(Scope::Cta),
        "cluster" => Some(Scope::Cluster),
        "gpu" => Some(Scope::Gpu),
        "sys" => Some(Scope::System),
        _ => None,
    }
}

fn parse_rmw_op(qualifier: &str) -> Option<RmwOp> {
    Some(match qualifier {
        "add" => RmwOp::Add,
        "exch" => RmwOp::Exchange,
        "cas" => RmwOp::CompareAndSwap,
        "or" => RmwOp::Or,
        "and" => RmwOp::And,
        "xor" => RmwOp::Xor,
        "max" => RmwOp::Max,
        "min" => RmwOp::Min,
        "inc" => RmwOp::Increment,
        "dec" => RmwOp::Decrement,
        _ => return None,
    })
}

/// The dotted qualifiers after a mnemonic, consumed left to right.
struct Qualifiers<'a> {
    items: Vec<&'a str>,
    position: usize,
}

impl<'a> Qualifiers<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.items.get(self.position).copied()
    }

    fn advance(&mut self) {
        self.position += 1;
    }

    fn take_if(&mut self, wanted: &str) -> bool {
        if self.peek() == Some(wanted) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn take_scope(&mut self) -> Option<Scope> {
        let scope = self.peek().and_then(parse_scope)?;
        self.advance();
        Some(scope)
    }
}

struct LineParser<'a> {
    text: &'a str,
    locations: &'a [Location],
}

impl LineParser<'_> {
    fn malformed(&self, reason: impl Into<String>) -> LitmusErrorKind {
        LitmusErrorKind::MalformedInstruction {
            text: self.text.to_string(),
            reason: reason.into(),
        }
    }

    fn parse(&self) -> Result<Event, LitmusErrorKind> {
        let trimmed = self.text.trim();
        let statement = trimmed
            .strip_suffix(';')
            .ok_or_else(|| self.malformed("an instruction ends with `;`"))?;
        if statement.contains(';') {
            return Err(self.malformed("write one instruction per line"));
        }
        let statement = statement.trim();
        let (opcode, operand_text) = match statement.find(char::is_whitespace) {
            Some(split) => (&statement[..split], statement[split..].trim()),
            None => (statement, ""),
        };
        let operands: Vec<&str> = if operand_text.is_empty() {
            Vec::new()
        } else {
            operand_text.split(',').map(str::trim).collect()
        };
        let mut pieces = opcode.split('.');
        let mnemonic = pieces.next().unwrap_or_default();
        let items: Vec<&str> = pieces.collect();
        if items.iter().any(|item| item.is_empty()) {
            return Err(self.malformed("empty qualifier (two dots in a row, or a trailing dot)"));
        }
        let mut qualifiers = Qualifiers { items, position: 0 };
        match mnemonic {
            "ld" => self.parse_load(&mut qualifiers, &operands),
            "st" => self.parse_store(&mut qualifiers, &operands),
            "atom" => self.parse_rmw(&mut qualifiers, &operands, true),
            "red" => self.parse_rmw(&mut qualifiers, &operands, false),
            "fence" => self.parse_fence(&qualifiers, &operands),
            "membar" => self.parse_membar(&qualifiers, &operands),
            "bar" | "barrier" => self.parse_barrier(&qualifiers, &operands),
            _ => Err(LitmusErrorKind::UnknownInstruction {
                text: self.text.trim().to_string(),
            }),
        }
    }

    /// A scope that must follow `.relaxed`, `.acquire` or `.release` on a load or store.
    fn required_scope(
        &self,
        qualifiers: &mut Qualifiers<'_>,
        semantics: &str,
    ) -> Result<Scope, LitmusErrorKind> {
        qualifiers.take_scope().ok_or_else(|| {
            self.malformed(format!(
                "`.{semantics}` requires a scope: .cta, .cluster, .gpu or .sys"
            ))
        })
    }

    /// `.global` and then `.u32` or `.b32`, ending the qualifiers.
    fn finish_access(
        &self,
        qualifiers: &mut Qualifiers<'_>,
        order_is_scoped: bool,
    ) -> Result<(), LitmusErrorKind> {
        match qualifiers.peek() {
            Some("global") => qualifiers.advance(),
            Some(scope) if parse_scope(scope).is_some() => {
                return Err(self.malformed(if order_is_scoped {
                    format!("unexpected second scope `.{scope}`")
                } else {
                    format!(
                        "a scope (`.{scope}`) needs `.relaxed`, `.acquire` or `.release` before it"
                    )
                }))
            }
            Some(space @ ("shared" | "local" | "const" | "param")) => {
                return Err(self.malformed(format!(
                    "only the .global state space is supported, not .{space}"
                )))
            }
            Some(other) => {
                return Err(self.malformed(format!("expected `.global`, found `.{other}`")))
            }
            None => return Err(self.malformed("expected `.global` and a type")),
        }
        self.finish_type(qualifiers)
    }

    fn finish_type(&self, qualifiers: &mut Qualifiers<'_>) -> Result<(), LitmusErrorKind> {
        match qualifiers.peek() {
            Some("u32" | "b32") => qualifiers.advance(),
            Some(other) => {
                return Err(self.malformed(format!(
                    "only .u32 and .b32 values are supported, not `.{other}`"
                )))
            }
            None => return Err(self.malformed("missing the type (.u32 or .b32)")),
        }
        match qualifiers.peek() {
            None => Ok(()),
            Some(extra) => Err(self.malformed(format!("unexpected qualifier `.{extra}`"))),
        }
    }

    fn expect_operand_count(
        &self,
        operands: &[&str],
        count: usize,
        form: &str,
    ) -> Result<(), LitmusErrorKind> {
        if operands.len() == count && operands.iter().all(|operand| !operand.is_empty()) {
            Ok(())
        } else {
            Err(self.malformed(format!("expected {count} operands: {form}")))
        }
    }

    fn parse_address(&self, token: &str) -> Result<LocationId, LitmusErrorKind> {
        let inner = token
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
            .map(str::trim)
            .ok_or_else(|| {
                self.malformed(format!("`{token}` is not an address; write `[location]`"))
            })?;
        if !is_identifier(inner) {
            return Err(self.malformed(format!(
                "address `{token}` must name a location, as in `[x]`; offsets and registers are not supported"
            )));
        }
        self.locations
            .iter()
            .position(|location| location.name == inner)
            .map(|index| LocationId(index as u32))
            .ok_or_else(|| LitmusErrorKind::UnknownLocation {
                name: inner.to_string(),
                declared: if self.locations.is_empty() {
                    "no locations".to_string()
                } else {
                    self.locations
                        .iter()
                        .map(|location| format!("`{}`", location.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            })
    }

    fn parse_value(&self, token: &str) -> Result<Value, LitmusErrorKind> {
        let starts_like_number = token
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_digit() || first == '-');
        if starts_like_number {
            parse_literal(token)
                .map(Value::Immediate)
                .ok_or_else(|| self.malformed(format!("`{token}` is not a 32-bit integer literal")))
        } else {
            parse_register(token).map(Value::Register)
        }
    }

    fn parse_load(
        &self,
        qualifiers: &mut Qualifiers<'_>,
        operands: &[&str],
    ) -> Result<Event, LitmusErrorKind> {
        let order = self.parse_access_order(qualifiers, AccessKind::Load)?;
        self.finish_access(
            qualifiers,
            order.strength().is_some() && order != AccessOrder::Volatile,
        )?;
        self.expect_operand_count(operands, 2, "ld rN, [location]")?;
        Ok(Event::Load {
            order,
            dst: parse_register(operands[0])?,
            location: self.parse_address(operands[1])?,
        })
    }

    /// The ordering qualifiers of a load or a store: `.weak`, `.volatile`,
    /// `.relaxed.S`, and `.acquire.S` for a load or `.release.S` for a
    /// store; none is weak.
    fn parse_access_order(
        &self,
        qualifiers: &mut Qualifiers<'_>,
        kind: AccessKind,
    ) -> Result<AccessOrder, LitmusErrorKind> {
        let (name, allowed) = match kind {
            AccessKind::Load => ("load", "acquire"),
            AccessKind::Store => ("store", "release"),
        };
        let order = match qualifiers.peek() {
            Some("weak") => {
                qualifiers.advance();
                AccessOrder::Weak
            }
            Some("volatile") => {
                qualifiers.advance();
                AccessOrder::Volatile
            }
            Some("relaxed") => {
                qualifiers.advance();
                AccessOrder::Relaxed(self.required_scope(qualifiers, "relaxed")?)
            }
            Some(semantics) if semantics == allowed => {
                qualifiers.advance();
                let scope = self.required_scope(qualifiers, allowed)?;
                match kind {
                    AccessKind::Load => AccessOrder::Acquire(scope),
                    AccessKind::Store => AccessOrder::Release(scope),
                }
            }
            Some(semantics @ ("acquire" | "release" | "acq_rel" | "sc")) => {
                return Err(self.malformed(format!("a {name} cannot be `.{semantics}`")))
            }
            _ => AccessOrder::Weak,
        };
        Ok(order)
    }

    fn parse_store(
        &self,
        qualifiers: &mut Qualifiers<'_>,
        operands: &[&str],
    ) -> Result<Event, LitmusErrorKind> {
        let order = self.parse_access_order(qualifiers, AccessKind::Store)?;
        self.finish_access(
            qualifiers,
            order.strength().is_some() && order != AccessOrder::Volatile,
        )?;
        self.expect_operand_count(operands, 2, "st [location], value")?;
        Ok(Event::Store {
            order,
            location: self.parse_address(operands[0])?,
            value: self.parse_value(operands[1])?,
        })
    }

    /// `atom` (with a destination register) and `red` (without one).
    fn parse_rmw(
        &self,
        qualifiers: &mut Qualifiers<'_>,
        operands: &[&str],
        returns_value: bool,
    ) -> Result<Event, LitmusErrorKind> {
        let mnemonic = if returns_value { "atom" } else { "red" };
        let semantics = match qualifiers.peek() {
            Some(name @ ("relaxed" | "acquire" | "release" | "acq_rel")) => {
                qualifiers.advance();
                match name {
                    "relaxed" => RmwSemantics::Relaxed,
                    "acquire" => RmwSemantics::Acquire,
                    "release" => RmwSemantics::Release,
                    _ => RmwSemantics::AcquireRelease,
                }
            }
            Some(semantics @ ("sc" | "weak" | "volatile")) => {
                return Err(self.malformed(format!("`{mnemonic}` cannot be `.{semantics}`")))
            }
            _ => RmwSemantics::Relaxed,
        };
        if !returns_value && semantics.acquires() {
            return Err(self.malformed(
                "`red` has only .relaxed and .release semantics: a reduction is never an acquire",
            ));
        }
        let scope = qualifiers.take_scope().unwrap_or(Scope::Gpu);
        if !qualifiers.take_if("global") {
            return Err(match qualifiers.peek() {
                Some(space @ ("shared" | "local" | "shared::cta" | "shared::cluster")) => self
                    .malformed(format!(
                        "only the .global state space is supported, not .{space}"
                    )),
                _ => self.malformed(format!(
                    "expected `{mnemonic}{{.sem}}{{.scope}}.global.op.type`"
                )),
            });
        }
        let op = match qualifiers.peek() {
            Some(name) => parse_rmw_op(name).ok_or_else(|| {
                self.malformed(format!(
                    "unknown operation `.{name}`; supported are add exch cas or and xor max min inc dec"
                ))
            })?,
            None => return Err(self.malformed("missing the operation and the type")),
        };
        qualifiers.advance();
        if !returns_value && matches!(op, RmwOp::Exchange | RmwOp::CompareAndSwap) {
            return Err(self.malformed("`red` has no exch or cas form; use `atom`"));
        }
        self.finish_type(qualifiers)?;
        let value_count = op.operand_count();
        let (dst, address, values) = if returns_value {
            let form = if value_count == 2 {
                "atom rN, [location], compare, new"
            } else {
                "atom rN, [location], value"
            };
            self.expect_operand_count(operands, 2 + value_count, form)?;
            (
                Some(parse_register(operands[0])?),
                operands[1],
                &operands[2..],
            )
        } else {
            self.expect_operand_count(operands, 2, "red [location], value")?;
            (None, operands[0], &operands[1..])
        };
        Ok(Event::Rmw {
            order: RmwOrder { semantics, scope },
            op,
            dst,
            location: self.parse_address(address)?,
            operands: values
                .iter()
                .map(|token| self.parse_value(token))
                .collect::<Result<_, _>>()?,
        })
    }

    fn parse_fence(
        &self,
        qualifiers: &Qualifiers<'_>,
        operands: &[&str],
    ) -> Result<Event, LitmusErrorKind> {
        if !operands.is_empty() {
            return Err(self.malformed("a fence takes no operands"));
        }
        let (kind, scope_text) = match qualifiers.items.as_slice() {
            ["sc", scope] => (FenceKind::Sc, *scope),
            ["acq_rel", scope] => (FenceKind::AcquireRelease, *scope),
            [scope] if parse_scope(scope).is_some() => (FenceKind::AcquireRelease, *scope),
            [semantics @ ("acquire" | "release"), ..] => {
                return Err(self.malformed(format!(
                    "`fence.{semantics}` is not supported; use fence.acq_rel or fence.sc"
                )))
            }
            ["sc" | "acq_rel"] | [] => {
                return Err(self.malformed("a fence needs a scope: .cta, .cluster, .gpu or .sys"))
            }
            _ => {
                return Err(
                    self.malformed("supported fences are fence.sc.S, fence.acq_rel.S and fence.S")
                )
            }
        };
        let scope = parse_scope(scope_text)
            .ok_or_else(|| self.malformed(format!("`.{scope_text}` is not a scope")))?;
        Ok(Event::Fence { kind, scope })
    }

    fn parse_membar(
        &self,
        qualifiers: &Qualifiers<'_>,
        operands: &[&str],
    ) -> Result<Event, LitmusErrorKind> {
        if !operands.is_empty() {
            return Err(self.malformed("membar takes no operands"));
        }
        // On sm_70 and later `membar.level` is a synonym of `fence.sc` at the matching scope.
        let scope = match qualifiers.items.as_slice() {
            ["cta"] => Scope::Cta,
            ["gl"] => Scope::Gpu,
            ["sys"] => Scope::System,
            _ => return Err(self.malformed("supported are membar.cta, membar.gl and membar.sys")),
        };
        Ok(Event::Fence {
            kind: FenceKind::Sc,
            scope,
        })
    }

    fn parse_barrier(
        &self,
        qualifiers: &Qualifiers<'_>,
        operands: &[&str],
    ) -> Result<Event, LitmusErrorKind> {
        let supported_form = matches!(
            qualifiers.items.as_slice(),
            ["sync"] | ["cta", "sync"] | ["sync", "aligned"] | ["cta", "sync", "aligned"]
        );
        if !supported_form {
            return Err(self.malformed(
                "only bar.sync (or barrier.sync) is supported among the barrier instructions",
            ));
        }
        if operands != ["0"] {
            return Err(self.malformed(
                "only barrier 0 among all threads of the block is supported: write `bar.sync 0;`",
            ));
        }
        Ok(Event::Barrier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locations() -> Vec<Location> {
        vec![
            Location {
                name: "x".into(),
                init: 0,
            },
            Location {
                name: "y".into(),
                init: 0,
            },
        ]
    }

    fn parse(text: &str) -> Result<Event, LitmusErrorKind> {
        parse_instruction(text, &locations())
    }

    #[test]
    fn loads_and_stores_decode_their_order() {
        assert_eq!(
            parse("ld.global.u32 r0, [y];"),
            Ok(Event::Load {
                order: AccessOrder::Weak,
                dst: Register(0),
                location: LocationId(1)
            })
        );
        assert_eq!(
            parse("ld.acquire.gpu.global.b32 %r15, [x];"),
            Ok(Event::Load {
                order: AccessOrder::Acquire(Scope::Gpu),
                dst: Register(15),
                location: LocationId(0)
            })
        );
        assert_eq!(
            parse("st.volatile.global.u32 [x], 0x10;"),
            Ok(Event::Store {
                order: AccessOrder::Volatile,
                location: LocationId(0),
                value: Value::Immediate(16)
            })
        );
        assert_eq!(
            parse("st.release.cta.global.u32 [y], r3;"),
            Ok(Event::Store {
                order: AccessOrder::Release(Scope::Cta),
                location: LocationId(1),
                value: Value::Register(Register(3))
            })
        );
        assert_eq!(
            parse("st.weak.global.u32 [y], -1;"),
            Ok(Event::Store {
                order: AccessOrder::Weak,
                location: LocationId(1),
                value: Value::Immediate(u32::MAX)
            })
        );
    }

    #[test]
    fn atomics_take_ptx_defaults() {
        assert_eq!(
            parse("atom.global.add.u32 r1, [x], 1;"),
            Ok(Event::Rmw {
                order: RmwOrder {
                    semantics: RmwSemantics::Relaxed,
                    scope: Scope::Gpu
                },
                op: RmwOp::Add,
                dst: Some(Register(1)),
                location: LocationId(0),
                operands: vec![Value::Immediate(1)],
            })
        );
        assert_eq!(
            parse("atom.acq_rel.sys.global.cas.b32 r1, [x], 0, r2;"),
            Ok(Event::Rmw {
                order: RmwOrder {
                    semantics: RmwSemantics::AcquireRelease,
                    scope: Scope::System
                },
                op: RmwOp::CompareAndSwap,
                dst: Some(Register(1)),
                location: LocationId(0),
                operands: vec![Value::Immediate(0), Value::Register(Register(2))],
            })
        );
        assert_eq!(
            parse("red.release.cta.global.add.u32 [y], 2;"),
            Ok(Event::Rmw {
                order: RmwOrder {
                    semantics: RmwSemantics::Release,
                    scope: Scope::Cta
                },
                op: RmwOp::Add,
                dst: None,
                location: LocationId(1),
                operands: vec![Value::Immediate(2)],
            })
        );
    }

    #[test]
    fn fences_and_barriers_decode() {
        assert_eq!(
            parse("fence.sc.gpu;"),
            Ok(Event::Fence {
                kind: FenceKind::Sc,
                scope: Scope::Gpu
            })
        );
        assert_eq!(
            parse("fence.acq_rel.cluster;"),
            Ok(Event::Fence {
                kind: FenceKind::AcquireRelease,
                scope: Scope::Cluster
            })
        );
        assert_eq!(
            parse("fence.cta;"),
            Ok(Event::Fence {
                kind: FenceKind::AcquireRelease,
                scope: Scope::Cta
            })
        );
        assert_eq!(
            parse("membar.gl;"),
            Ok(Event::Fence {
                kind: FenceKind::Sc,
                scope: Scope::Gpu
            })
        );
        assert_eq!(
            parse("membar.sys;"),
            Ok(Event::Fence {
                kind: FenceKind::Sc,
                scope: Scope::System
            })
        );
        assert_eq!(parse("bar.sync 0;"), Ok(Event::Barrier));
        assert_eq!(parse("barrier.cta.sync.aligned 0;"), Ok(Event::Barrier));
    }

    #[test]
    fn unsupported_forms_are_rejected_with_a_reason() {
        let rejected = [
            "ld.relaxed.global.u32 r0, [x];",
            "ld.global.u64 r0, [x];",
            "ld.shared.u32 r0, [x];",
            "ld.release.gpu.global.u32 r0, [x];",
            "ld.volatile.gpu.global.u32 r0, [x];",
            "st.acquire.gpu.global.u32 [x], 1;",
            "st.global.u32 [x+4], 1;",
            "st.global.u32 [x], 1",
            "st.global.u32 [x], 1; st.global.u32 [y], 1;",
            "red.acquire.gpu.global.add.u32 [x], 1;",
            "red.global.cas.u32 [x], 1, 2;",
            "atom.global.cas.u32 r0, [x], 1;",
            "atom.global.sub.u32 r0, [x], 1;",
            "fence;",
            "fence.release.gpu;",
            "membar.gpu;",
            "bar.sync 1;",
            "bar.arrive 0;",
            "ld.global.u32 r0, [x], 1;",
            "st.global.u32 [x], 99999999999;",
        ];
        for text in rejected {
            assert!(
                matches!(
                    parse(text),
                    Err(LitmusErrorKind::MalformedInstruction { .. })
                ),
                "{text}: {:?}",
                parse(text)
            );
        }
    }

    #[test]
    fn registers_locations_and_mnemonics_have_their_own_errors() {
        assert_eq!(
            parse("ld.global.u32 r16, [x];"),
            Err(LitmusErrorKind::BadRegister { text: "r16".into() })
        );
        assert_eq!(
            parse("ld.global.u32 q1, [x];"),
            Err(LitmusErrorKind::BadRegister { text: "q1".into() })
        );
        assert_eq!(
            parse("st.global.u32 [x], r01;"),
            Err(LitmusErrorKind::BadRegister { text: "r01".into() })
        );
        assert_eq!(
            parse("ld.global.u32 r1, [z];"),
            Err(LitmusErrorKind::UnknownLocation {
                name: "z".into(),
                declared: "`x`, `y`".into()
            })
        );
        assert_eq!(
            parse("add.u32 r1, r2, 1;"),
            Err(LitmusErrorKind::UnknownInstruction {
                text: "add.u32 r1, r2, 1;".into()
            })
        );
    }

    #[test]
    fn literals_cover_the_32_bit_range() {
        assert_eq!(parse_literal("4294967295"), Some(u32::MAX));
        assert_eq!(parse_literal("4294967296"), None);
        assert_eq!(parse_literal("-2147483648"), Some(1 << 31));
        assert_eq!(parse_literal("-2147483649"), None);
        assert_eq!(parse_literal("0xFFffFFff"), Some(u32::MAX));
        assert_eq!(parse_literal("0x"), None);
        assert_eq!(parse_literal("-"), None);
        assert_eq!(parse_literal("12a"), None);
    }
}

/// Which side of memory an access is, for its ordering qualifiers.
#[derive(Clone, Copy)]
enum AccessKind {
    Load,
    Store,
}
