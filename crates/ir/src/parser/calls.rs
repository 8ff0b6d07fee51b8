//! Device functions (`.func`) and `call` in PTX. A call is inlined while the
//! kernel is parsed: the callee's body is parsed again at the call site with
//! fresh registers and labels, so the IR and the machine never see a call.
//!
//! The callee's `.param` parameters and return values name the caller's
//! call-sequence variables (`.param .b32 param0;` inside `{ // callseq }`),
//! which the parser makes `.local` variables of the kernel: per-thread
//! storage that the caller's `st.param` and the callee's `ld.param` (and the
//! callee's `st.param` of its return value and the caller's `ld.param`) both
//! address. `ret` becomes a branch to the end of the inlined body; a guarded
//! call becomes a branch around it. Recursion cannot be inlined and is an
//! error, as are indirect calls and calls of functions without a body.

use super::*;

/// The most instructions a kernel may have once its calls are inlined: a
/// chain of functions that each call the next twice doubles at every level.
const MAX_INLINED_INSTRS: usize = 1 << 20;

/// The key under which an inlined body's return label is visible. Label
/// names in the text are words, which never contain a space.
const RETURN_LABEL: &str = " return";

/// A `.param` of a device function: a parameter or a return value.
#[derive(Clone, Debug)]
pub(super) struct FunctionParam {
    name: String,
    ty: ScalarType,
    /// Elements: 1 for a scalar, N for `name[N]`.
    len: u64,
    is_array: bool,
    align: u32,
    token: Token,
}

impl FunctionParam {
    fn size_bytes(&self) -> u64 {
        self.len * u64::from(self.ty.size_bytes())
    }
}

/// A device function: its header, and where its body is.
#[derive(Clone, Debug)]
pub(super) struct Function {
    name: String,
    name_token: Token,
    returns: Vec<FunctionParam>,
    params: Vec<FunctionParam>,
    /// The token after the `{` that opens the body; `None` for a declaration
    /// without one (a prototype, or `.extern .func`).
    body: Option<usize>,
}

impl Function {
    /// Whether two headers take and return the same kinds of values (names may differ).
    fn same_signature(&self, other: &Function) -> bool {
        let same = |a: &[FunctionParam], b: &[FunctionParam]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| x.ty == y.ty && x.len == y.len && x.is_array == y.is_array)
        };
        same(&self.returns, &other.returns) && same(&self.params, &other.params)
    }
}

/// A call of a function the CUDA runtime provides, as written.
struct RuntimeCall<'a> {
    name_token: &'a Token,
    guard: Option<Guard>,
    returns: &'a [(SymbolId, Token)],
    args: &'a [(SymbolId, Token)],
    loc: SourceLoc,
}

impl Parser<'_> {
    /// Finds every `.func` at the top level of the module before anything is
    /// parsed, so that a call can be inlined whether the callee's body comes
    /// before or after it. A header that does not parse is left for the
    /// main pass, which reports it in order.
    pub(super) fn scan_functions(&mut self) {
        let mut depth = 0usize;
        let mut index = 0;
        while index < self.tokens.len() {
            match &self.tokens[index].kind {
                TokenKind::Punct('{') => depth += 1,
                TokenKind::Punct('}') => depth = depth.saturating_sub(1),
                TokenKind::Directive(name) if name == "func" && depth == 0 => {
                    self.position = index;
                    if let Ok(mut function) = self.parse_function_header() {
                        if self.is_punct('{') {
                            function.body = Some(self.position + 1);
                        }
                        // The definition's header is the one its body uses;
                        // a second definition is reported by the main pass.
                        let keep_existing =
                            self.functions.get(&function.name).is_some_and(|existing| {
                                existing.body.is_some() || function.body.is_none()
                            });
                        if !keep_existing {
                            self.functions.insert(function.name.clone(), function);
                        }
                        index = self.position;
                        continue;
                    }
                }
                _ => {}
            }
            index += 1;
        }
        self.position = 0;
    }

    /// `.func [(returns)] name[(params)] [directives]`, up to the `;` or `{`.
    fn parse_function_header(&mut self) -> Result<Function> {
        self.next();
        let returns = if self.is_punct('(') {
            self.parse_function_params()?
        } else {
            Vec::new()
        };
        let (name, name_token) = self.expect_word("the function name")?;
        if name.contains('.') {
            return Err(self.error_at(&name_token, "a function name may not contain `.`"));
        }
        let params = if self.is_punct('(') {
            self.parse_function_params()?
        } else {
            Vec::new()
        };
        let mut seen = HashSet::new();
        for param in returns.iter().chain(&params) {
            if !seen.insert(param.name.as_str()) {
                return Err(
                    self.error_at(&param.token, format!("`{}` is declared twice", param.name))
                );
            }
        }
        self.skip_performance_directives();
        Ok(Function {
            name,
            name_token,
            returns,
            params,
            body: None,
        })
    }

    /// `(.param [.align N] .type name[N], ...)`.
    fn parse_function_params(&mut self) -> Result<Vec<FunctionParam>> {
        self.parse_parenthesized_list(|parser| {
            let token = parser.next();
            match &token.kind {
                TokenKind::Directive(name) if name == "param" => {}
                TokenKind::Directive(name) if name == "reg" => {
                    return Err(parser.error_at(
                        &token,
                        "device-function parameters in registers (`.reg`) are not supported: only `.param`",
                    ))
                }
                _ => return Err(parser.unexpected(&token, "`.param`")),
            }
            let mut align = parser.parse_param_attributes()?;
            let (ty, ty_token) = parser.expect_type_directive()?;
            if ty == ScalarType::Pred {
                return Err(parser.error_at(&ty_token, "a parameter cannot be a predicate"));
            }
            align = align.max(parser.parse_param_attributes()?);
            let (name, name_token) = parser.expect_word("a parameter name")?;
            if name.contains('.') {
                return Err(parser.error_at(&name_token, "a parameter name may not contain `.`"));
            }
            let (len, is_array) = if parser.eat_punct('[') {
                let (len, len_token) = parser.expect_integer("an array length")?;
                parser.expect_punct(']')?;
                if len == 0 || len > 1 << 16 {
                    return Err(parser.error_at(
                        &len_token,
                        "a parameter array must have 1 to 65536 elements",
                    ));
                }
                (len, true)
            } else {
                (1, false)
            };
            Ok(FunctionParam {
                name,
                ty,
                len,
                is_array,
                align: align.max(ty.size_bytes()),
                token: name_token,
            })
        })
    }

    /// `.ptr`, a state space, `.align N` around a parameter's type: the alignment.
    pub(super) fn parse_param_attributes(&mut self) -> Result<u32> {
        let mut align = 0;
        while let TokenKind::Directive(name) = &self.peek().kind {
            match name.as_str() {
                "ptr" | "global" | "shared" | "const" | "local" => {
                    self.next();
                }
                "align" => {
                    self.next();
                    align = self.expect_alignment()?;
                }
                _ => break,
            }
        }
        Ok(align)
    }

    /// A `.func` in the main pass: a declaration, or a definition whose body
    /// is parsed once on its own, so that an error in a function no kernel
    /// calls is still reported (and recursion found).
    pub(super) fn parse_function_item(&mut self) -> Result<()> {
        let func_token = self.peek().clone();
        let header = self.parse_function_header()?;
        let Some(recorded) = self.functions.get(&header.name).cloned() else {
            // The scan found every header that parses; this one did.
            return Err(self.error_at(
                &header.name_token,
                "this function was not found by the scan",
            ));
        };
        if !header.same_signature(&recorded) {
            return Err(self.error_at(
                &header.name_token,
                format!(
                    "`{}` is declared at line {} with different parameters",
                    header.name, recorded.name_token.line
                ),
            ));
        }
        if self.eat_punct(';') {
            return Ok(());
        }
        self.expect_punct('{').map_err(|_| {
            self.unexpected(self.peek(), "`;` or `{` after the function's parameters")
        })?;
        if recorded.body != Some(self.position) {
            return Err(self.error_at(
                &header.name_token,
                format!(
                    "function `{}` is defined twice (first at line {})",
                    header.name, recorded.name_token.line
                ),
            ));
        }
        let loc = self.loc_for(&func_token);
        let mut scope = KernelScope::new(header.name.clone(), loc);
        self.declare_module_symbols(&mut scope)?;
        let mut args = Vec::new();
        for param in recorded.returns.iter().chain(&recorded.params) {
            let symbol = Symbol {
                name: param.name.clone(),
                space: StateSpace::Local,
                ty: param.ty,
                len: Some(param.len),
                is_array: param.is_array,
                align: param.align,
                init: Vec::new(),
                loc,
            };
            args.push(self.declare_symbol(&mut scope, &param.token, symbol)?);
        }
        self.inline_body(&mut scope, &recorded, &args)
    }

    /// Whether the statement ahead is a `call`, guarded or not.
    pub(super) fn is_call_next(&self) -> bool {
        let mut ahead = 0;
        if self.peek().kind == TokenKind::Punct('@') {
            ahead = if self.peek_at(1).kind == TokenKind::Punct('!') {
                3
            } else {
                2
            };
        }
        matches!(
            &self.peek_at(ahead).kind,
            TokenKind::Word(word) if word == "call" || word.starts_with("call.")
        )
    }

    /// `[@[!]%p] call[.uni] [(ret),] name[, (args)];`: checks the call
    /// against the callee's header and inlines its body here.
    pub(super) fn parse_call(&mut self, scope: &mut KernelScope) -> Result<()> {
        let start = self.peek().clone();
        let loc = self.loc_for(&start);
        let guard = self.parse_guard(scope)?;
        let (opcode, opcode_token) = self.expect_word("`call`")?;
        if let Some(modifier) = opcode.split('.').skip(1).find(|&m| m != "uni") {
            return Err(self.error_at(
                &opcode_token,
                format!("`{opcode}`: modifier `.{modifier}` is not valid here"),
            ));
        }
        let returns = if self.is_punct('(') {
            let list = self.parse_call_list(scope)?;
            self.expect_punct(',')?;
            list
        } else {
            Vec::new()
        };
        let name_token = self.next();
        let name = match &name_token.kind {
            TokenKind::Word(name) => name.clone(),
            TokenKind::Register(_) => {
                return Err(self.error_at(
                    &name_token,
                    "indirect calls (through a register) are not supported: only calls that name their function",
                ))
            }
            _ => return Err(self.unexpected(&name_token, "the name of the called function")),
        };
        let mut args = Vec::new();
        if self.eat_punct(',') {
            args = self.parse_call_list(scope)?;
            if self.is_punct(',') {
                return Err(self.error_at(
                    self.peek(),
                    "a call with a prototype or a list of targets is an indirect call; indirect calls are not supported",
                ));
            }
        }
        self.end_statement()?;
        let after = self.position;

        let Some(function) = self.functions.get(&name).cloned() else {
            return Err(self.error_at(&name_token, format!("call of undefined function `{name}`")));
        };
        if let Some(first) = scope.inline_stack.iter().position(|(f, _)| *f == name) {
            let chain: Vec<String> = scope.inline_stack[first..]
                .iter()
                .map(|(f, _)| format!("`{f}`"))
                .chain(std::iter::once(format!("`{name}`")))
                .collect();
            return Err(self.error_at(
                &name_token,
                format!(
                    "recursive call of `{name}` ({}): device functions are inlined, so recursion is not supported",
                    chain.join(" calls ")
                ),
            ));
        }
        if args.len() != function.params.len() {
            return Err(self.error_at(
                &name_token,
                format!(
                    "`{name}` takes {} parameter(s), but this call passes {}",
                    function.params.len(),
                    args.len()
                ),
            ));
        }
        if returns.len() != function.returns.len() {
            return Err(self.error_at(
                &name_token,
                format!(
                    "`{name}` returns {} value(s), but this call receives {}",
                    function.returns.len(),
                    returns.len()
                ),
            ));
        }
        for ((symbol, token), param) in returns
            .iter()
            .zip(&function.returns)
            .chain(args.iter().zip(&function.params))
        {
            let symbol = scope.kernel.symbol(*symbol);
            if symbol.space != StateSpace::Local {
                return Err(self.error_at(
                    token,
                    format!(
                        "`{}` is not a `.param` variable of the call sequence",
                        symbol.name
                    ),
                ));
            }
            if symbol.size_bytes() != Some(param.size_bytes()) {
                return Err(self.error_at(
                    token,
                    format!(
                        "`{}` has {} bytes, but `{}` of `{name}` has {}",
                        symbol.name,
                        symbol.size_bytes().unwrap_or(0),
                        param.name,
                        param.size_bytes()
                    ),
                ));
            }
        }

        let Some(body) = function.body else {
            let call = RuntimeCall {
                name_token: &name_token,
                guard,
                returns: &returns,
                args: &args,
                loc,
            };
            return self.call_runtime_function(scope, &function, call);
        };
        // A guarded call is a branch around the body, taken where the guard fails.
        let call = scope.inline_count + 1;
        let skip = guard.map(|guard| {
            let label = self.new_label(
                scope,
                &format!(" skip{call}"),
                format!("$skip$call{call}"),
                &name_token,
            );
            scope.kernel.instrs.push(Instr {
                guard: Some(Guard {
                    reg: guard.reg,
                    negated: !guard.negated,
                }),
                op: Op::Branch { target: label },
                loc,
            });
            label
        });
        let caller_loc = self.active_loc;
        self.position = body;
        let ids: Vec<SymbolId> = returns.iter().chain(&args).map(|&(id, _)| id).collect();
        self.inline_body(scope, &function, &ids)?;
        self.position = after;
        // The callee's `.loc` lines do not reach past the call.
        self.active_loc = caller_loc;
        if let Some(skip) = skip {
            scope.label_sites[skip.index()].0 = Some(InstrId(scope.kernel.instrs.len() as u32));
        }
        if scope.kernel.instrs.len() > MAX_INLINED_INSTRS {
            return Err(self.error_at(
                &name_token,
                format!("with its calls inlined, the kernel has more than {MAX_INLINED_INSTRS} instructions"),
            ));
        }
        Ok(())
    }

    /// A call of a function the CUDA runtime provides rather than the
    /// module (`.extern .func`): `vprintf` (what `printf` compiles to) and
    /// `__assertfail` (a failed `assert`) become instructions of their own,
    /// which read their arguments from the call sequence's `.param`
    /// variables and write the return value back to it, as a body would.
    fn call_runtime_function(
        &mut self,
        scope: &mut KernelScope,
        function: &Function,
        call: RuntimeCall,
    ) -> Result<()> {
        use ScalarType::{B32, B64};
        let RuntimeCall {
            name_token,
            guard,
            returns,
            args,
            loc,
        } = call;
        let name = function.name.as_str();
        let (expected_returns, expected_params): (&[ScalarType], &[ScalarType]) = match name {
            "vprintf" => (&[B32], &[B64, B64]),
            "__assertfail" => (&[], &[B64, B64, B32, B64, B64]),
            _ => {
                return Err(self.error_at(
                    name_token,
                    format!(
                        "`{name}` is declared but not defined in this module; of the external \
                         device functions, warpsim provides `vprintf` (printf) and `__assertfail` (assert)"
                    ),
                ))
            }
        };
        let matches = |declared: &[FunctionParam], expected: &[ScalarType]| {
            declared.len() == expected.len()
                && declared
                    .iter()
                    .zip(expected)
                    .all(|(param, &ty)| param.len == 1 && param.ty.size_bytes() == ty.size_bytes())
        };
        if !matches(&function.returns, expected_returns)
            || !matches(&function.params, expected_params)
        {
            return Err(self.error_at(
                &function.name_token,
                format!("`{name}` is declared with parameters that differ from the CUDA runtime's"),
            ));
        }
        let instruction = |op| Instr { guard, op, loc };
        // `__assertfail`'s last argument, the size of a character, says
        // nothing warpsim needs: it is not read.
        let used = if name == "vprintf" { 2 } else { 4 };
        let mut values = Vec::with_capacity(used);
        for (&(symbol, _), &ty) in args.iter().zip(expected_params).take(used) {
            let register = self.fresh_register(scope, name, ty);
            scope.kernel.instrs.push(instruction(Op::Load {
                space: StateSpace::Local,
                order: MemoryOrder::Weak,
                ty,
                dst: vec![register],
                addr: Address {
                    base: AddressBase::Symbol(symbol),
                    offset: 0,
                },
            }));
            values.push(Operand::Reg(register));
        }
        let op = if name == "vprintf" {
            let result = returns
                .first()
                .map(|&(symbol, _)| (symbol, self.fresh_register(scope, name, B32)));
            scope.kernel.instrs.push(instruction(Op::Printf {
                dst: result.map(|(_, register)| register),
                format: values[0],
                arguments: values[1],
            }));
            let Some((symbol, register)) = result else {
                return Ok(());
            };
            Op::Store {
                space: StateSpace::Local,
                order: MemoryOrder::Weak,
                ty: B32,
                addr: Address {
                    base: AddressBase::Symbol(symbol),
                    offset: 0,
                },
                src: vec![Operand::Reg(register)],
            }
        } else {
            Op::AssertFail {
                message: values[0],
                file: values[1],
                line: values[2],
                function: values[3],
            }
        };
        scope.kernel.instrs.push(instruction(op));
        Ok(())
    }

    /// A new register of `ty` for an instruction the parser adds, named
    /// after `purpose` and unlike any other.
    fn fresh_register(&self, scope: &mut KernelScope, purpose: &str, ty: ScalarType) -> RegId {
        let mut counter = scope.kernel.regs.len();
        let name = loop {
            let candidate = format!("%{purpose}${counter}");
            if !scope.reg_names.contains(&candidate) {
                break candidate;
            }
            counter += 1;
        };
        scope.reg_names.insert(name.clone());
        let id = RegId(scope.kernel.regs.len() as u32);
        scope.kernel.regs.push(RegDecl { name, ty });
        id
    }

    /// `(a, b, ...)`: the call sequence's `.param` variables.
    fn parse_call_list(&mut self, scope: &KernelScope) -> Result<Vec<(SymbolId, Token)>> {
        self.parse_parenthesized_list(|parser| {
            let token = parser.next();
            let TokenKind::Word(name) = &token.kind else {
                return Err(parser.unexpected(&token, "a `.param` variable of the call sequence"));
            };
            let symbol = parser.visible_symbol(scope, &token, name)?;
            Ok((symbol, token))
        })
    }

    /// Parses `function`'s body (from the current token to its closing `}`)
    /// into the kernel, its parameters and return values naming `args`. The
    /// body sees only its own registers and labels, module variables, and
    /// its parameters; the caller's names come back when it ends.
    fn inline_body(
        &mut self,
        scope: &mut KernelScope,
        function: &Function,
        args: &[SymbolId],
    ) -> Result<()> {
        scope.inline_count += 1;
        let call = scope.inline_count;
        let mut visible: IndexMap<String, SymbolId> =
            scope.module_symbol_ids.iter().cloned().collect();
        for (param, &id) in function.returns.iter().chain(&function.params).zip(args) {
            visible.insert(param.name.clone(), id);
        }
        let caller_symbols = std::mem::replace(&mut scope.symbols, visible);
        let caller_regs = std::mem::take(&mut scope.regs);
        let caller_labels = std::mem::take(&mut scope.labels);
        scope.inline_stack.push((function.name.clone(), call));
        // The body is a nested scope: its registers get names of their own.
        scope.scope_frames.push(ScopeFrame::default());
        self.parse_body(scope, &format!("device function `{}`", function.name))?;
        scope.scope_frames.pop();
        let end = InstrId(scope.kernel.instrs.len() as u32);
        let ret = self.return_label(scope, &function.name_token);
        scope.label_sites[ret.index()].0 = Some(end);
        self.check_labels_defined(scope)?;
        scope.inline_stack.pop();
        scope.symbols = caller_symbols;
        scope.regs = caller_regs;
        scope.labels = caller_labels;
        Ok(())
    }

    /// The label at the end of the body being inlined, where `ret` goes.
    /// It is made at its first mention, so that labels are numbered in the
    /// order the printed text mentions them.
    pub(super) fn return_label(&self, scope: &mut KernelScope, token: &Token) -> LabelId {
        if let Some(&id) = scope.labels.get(RETURN_LABEL) {
            return id;
        }
        let call = scope.inline_stack.last().map_or(0, |&(_, call)| call);
        self.new_label(scope, RETURN_LABEL, format!("$ret$call{call}"), token)
    }
}
