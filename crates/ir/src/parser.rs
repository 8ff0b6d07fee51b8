//! Reads `.kir` text into a [`Module`]. The grammar is a PTX-like subset
//! written one statement per line and ended by `;` (see the crate docs).
//! The parser stops at the first error and never panics, whatever the input.

use std::collections::{HashMap, HashSet};

use indexmap::IndexMap;

use crate::error::ParseError;
use crate::instr::*;
use crate::kernel::*;
use crate::lexer::{tokenize, Token, TokenKind};
use crate::types::{ScalarType, Scope, SpecialReg, StateSpace, TypeKind};

mod calls;
mod scalar;

use calls::Function;

/// PTX's predefined constant for the number of threads in a warp.
const WARP_SIZE_CONSTANT: &str = "WARP_SZ";

/// Parses a whole `.kir` file. `file_name` is used in error messages and as
/// the file of every location not set by a `.loc` directive.
pub fn parse_module(file_name: &str, text: &str) -> Result<Module, ParseError> {
    parse(file_name, text, Dialect::Kir)
}

/// Parses PTX as nvcc and NVRTC emit it (PTX ISA, "PTX Module Directives"):
/// `.version`, `.target`, `.address_size`, `.visible .entry` kernels with
/// their `.param` lists and performance directives, module-level variables,
/// `.file`/`.loc` debug lines (so every instruction is located at its CUDA
/// source line), and the instruction set the IR shares with PTX. Anything
/// else is an error naming the PTX line.
pub fn parse_ptx(file_name: &str, text: &str) -> Result<Module, ParseError> {
    parse(file_name, text, Dialect::Ptx)
}

fn parse(file_name: &str, text: &str, dialect: Dialect) -> Result<Module, ParseError> {
    let tokens = tokenize(file_name, text)?;
    let mut parser = Parser {
        file_name,
        dialect,
        tokens,
        position: 0,
        module: Module::default(),
        declared_files: HashMap::new(),
        pending_files: HashMap::new(),
        module_symbols: Vec::new(),
        own_file: None,
        active_loc: None,
        inlined_places: HashMap::new(),
        inline_site_ids: HashMap::new(),
        functions: HashMap::new(),
    };
    if dialect == Dialect::Ptx {
        // A kernel may call a device function whose body comes later.
        parser.scan_functions();
    }
    parser.parse_module()?;
    if let Some((number, token)) = parser
        .pending_files
        .iter()
        .min_by_key(|(_, token)| (token.line, token.column))
    {
        return Err(parser.error_at(
            token,
            format!("file {number} is not declared by a `.file` directive"),
        ));
    }
    let mut module = parser.module;
    canonical_inline_sites(&mut module);
    Ok(module)
}

/// Keeps the inline sites that locations use, numbered in the order the
/// module's locations first reach them (a site's parents before it), so
/// that a module and its printed form parse to the same numbering.
fn canonical_inline_sites(module: &mut Module) {
    let old = std::mem::take(&mut module.inline_sites);
    let mut renumbered: Vec<Option<InlineSiteId>> = vec![None; old.len()];
    let mut sites = Vec::new();
    // Gives `site` (and its parents first) a new number.
    fn visit(
        site: InlineSiteId,
        old: &[InlineSite],
        renumbered: &mut Vec<Option<InlineSiteId>>,
        sites: &mut Vec<InlineSite>,
    ) -> InlineSiteId {
        if let Some(id) = renumbered[site.index()] {
            return id;
        }
        let original = old[site.index()];
        let inlined_at = original
            .inlined_at
            .map(|parent| visit(parent, old, renumbered, sites));
        let id = InlineSiteId(sites.len() as u32);
        sites.push(InlineSite {
            inlined_at,
            ..original
        });
        renumbered[site.index()] = Some(id);
        id
    }
    let mut renumber = |loc: &mut SourceLoc| {
        if let Some(site) = loc.inlined_at {
            loc.inlined_at = Some(visit(site, &old, &mut renumbered, &mut sites));
        }
    };
    for kernel in &mut module.kernels {
        renumber(&mut kernel.loc);
        for symbol in &mut kernel.symbols {
            renumber(&mut symbol.loc);
        }
        for instr in &mut kernel.instrs {
            renumber(&mut instr.loc);
        }
    }
    module.inline_sites = sites;
}

/// Which text form is being read: the two share the instruction grammar.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Kir,
    Ptx,
}

type Result<T, E = ParseError> = std::result::Result<T, E>;

struct Parser<'a> {
    file_name: &'a str,
    dialect: Dialect,
    /// PTX names files at the end (`.file` after the `.loc` lines that use
    /// them): file numbers seen in `.loc` before their `.file`, with the first use.
    pending_files: HashMap<u64, Token>,
    /// Module-level variables (PTX): every kernel after them can use them.
    module_symbols: Vec<(Symbol, Token)>,
    tokens: Vec<Token>,
    position: usize,
    module: Module,
    /// `.file N` numbers to file ids.
    declared_files: HashMap<u64, FileId>,
    /// This file's id, registered the first time an item takes its own line.
    own_file: Option<FileId>,
    /// The location set by the last `.loc`.
    active_loc: Option<SourceLoc>,
    /// For each place a `.loc` has named (file, line, column): where the
    /// code there was inlined, as that `.loc` said (PTX names a call site
    /// by its place only).
    inlined_places: HashMap<(FileId, u32, u64), Option<InlineSiteId>>,
    inline_site_ids: HashMap<InlineSite, InlineSiteId>,
    /// The device functions (`.func`) of a PTX module, by name, found
    /// before parsing so that calls can be inlined wherever the body is.
    functions: HashMap<String, Function>,
}

/// What the parser knows about the kernel being read.
struct KernelScope {
    /// The names visible here: registers, variables and labels. While a
    /// device function is being inlined they are the callee's own.
    regs: IndexMap<String, RegId>,
    symbols: IndexMap<String, SymbolId>,
    labels: IndexMap<String, LabelId>,
    /// Every register name of the kernel, so new ones can be made unique.
    reg_names: HashSet<String>,
    /// For each label: its name in the kernel (unique, as printed).
    label_names: Vec<String>,
    /// Every label name of the kernel, so new ones can be made unique.
    label_name_set: HashSet<String>,
    /// For each label: where it is defined (if yet) and first used.
    label_sites: Vec<(Option<InstrId>, Token)>,
    /// Nested PTX scopes `{ }`: for each open one, the names it declared and
    /// what they meant outside it (restored when it closes).
    scope_frames: Vec<ScopeFrame>,
    /// The module-level variables, by name: what an inlined device function sees.
    module_symbol_ids: Vec<(String, SymbolId)>,
    /// The device functions being inlined, innermost last, each with the
    /// number of its call site in this kernel (which names its labels).
    inline_stack: Vec<(String, u32)>,
    /// How many calls have been inlined into this kernel.
    inline_count: u32,
    /// `.shared`, `.global` and `.const` variables declared inside a device
    /// function are static: one per kernel, whatever the number of calls.
    function_statics: HashMap<(String, String), SymbolId>,
    kernel: Kernel,
}

/// The names one nested scope declared, and what each meant outside it.
#[derive(Default)]
struct ScopeFrame {
    regs: Vec<(String, Option<RegId>)>,
    symbols: Vec<(String, Option<SymbolId>)>,
}

impl KernelScope {
    /// The scope of a kernel (or a device function checked on its own) with
    /// nothing declared yet.
    fn new(name: String, loc: SourceLoc) -> KernelScope {
        KernelScope {
            regs: IndexMap::new(),
            symbols: IndexMap::new(),
            labels: IndexMap::new(),
            reg_names: HashSet::new(),
            label_names: Vec::new(),
            label_name_set: HashSet::new(),
            label_sites: Vec::new(),
            scope_frames: Vec::new(),
            module_symbol_ids: Vec::new(),
            inline_stack: Vec::new(),
            inline_count: 0,
            function_statics: HashMap::new(),
            kernel: Kernel {
                name,
                loc,
                symbols: Vec::new(),
                regs: Vec::new(),
                labels: Vec::new(),
                instrs: Vec::new(),
            },
        }
    }
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Token {
        &self.tokens[self.position.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        &self.tokens[(self.position + ahead).min(self.tokens.len() - 1)]
    }

    fn next(&mut self) -> Token {
        let token = self.peek().clone();
        if self.position < self.tokens.len() - 1 {
            self.position += 1;
        }
        token
    }

    #[cold]
    fn error_at(&self, token: &Token, message: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file_name.to_string(),
            line: token.line,
            column: token.column,
            length: token.length.max(1),
            message: message.into(),
        }
    }

    #[cold]
    fn unexpected(&self, token: &Token, expected: &str) -> ParseError {
        self.error_at(
            token,
            format!("expected {expected}, found {}", token.kind.describe()),
        )
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek().kind == TokenKind::Punct(c)
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.next();
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> Result<Token> {
        let token = self.next();
        if token.kind == TokenKind::Punct(c) {
            Ok(token)
        } else {
            Err(self.unexpected(&token, &format!("`{c}`")))
        }
    }

    /// A statement ends with `;`. A missing one is reported right after the
    /// statement's last token when the next token is on a later line: that is
    /// where the `;` belongs.
    fn end_statement(&mut self) -> Result<()> {
        let token = self.peek().clone();
        if token.kind == TokenKind::Punct(';') {
            self.next();
            return Ok(());
        }
        if let Some(previous) = self
            .position
            .checked_sub(1)
            .map(|index| self.tokens[index].clone())
        {
            if previous.line < token.line {
                let mut at_end = previous.clone();
                at_end.column = previous.column + previous.length;
                at_end.length = 1;
                return Err(self.error_at(&at_end, "expected `;` at the end of the statement"));
            }
        }
        Err(self.unexpected(&token, "`;` at the end of the statement"))
    }

    fn expect_word(&mut self, what: &str) -> Result<(String, Token)> {
        let token = self.next();
        match &token.kind {
            TokenKind::Word(word) => Ok((word.clone(), token)),
            _ => Err(self.unexpected(&token, what)),
        }
    }

    fn expect_integer(&mut self, what: &str) -> Result<(u64, Token)> {
        let token = self.next();
        match token.kind {
            TokenKind::Integer(value) => Ok((value, token)),
            _ => Err(self.unexpected(&token, what)),
        }
    }

    fn expect_type_directive(&mut self) -> Result<(ScalarType, Token)> {
        let token = self.next();
        if let TokenKind::Directive(name) = &token.kind {
            if let Some(ty) = ScalarType::from_name(name) {
                return Ok((ty, token));
            }
        }
        Err(self.unexpected(&token, "a type such as `.u32` or `.f32`"))
    }

    /// The location an item starting at `token` gets: the active `.loc`, or its own line.
    fn loc_for(&mut self, token: &Token) -> SourceLoc {
        if let Some(loc) = self.active_loc {
            return loc;
        }
        let file = *self.own_file.get_or_insert_with(|| {
            self.module.files.push(self.file_name.to_string());
            FileId(self.module.files.len() as u32 - 1)
        });
        SourceLoc::new(file, token.line)
    }

    fn parse_module(&mut self) -> Result<()> {
        loop {
            let token = self.peek().clone();
            match &token.kind {
                TokenKind::End => return Ok(()),
                TokenKind::Directive(name) if name == "file" => self.parse_file_directive()?,
                TokenKind::Directive(name) if name == "loc" => self.parse_loc_directive()?,
                TokenKind::Directive(name) if name == "kernel" && self.dialect == Dialect::Kir => {
                    self.parse_kernel()?
                }
                TokenKind::Directive(_) if self.dialect == Dialect::Ptx => {
                    self.parse_ptx_module_item()?
                }
                _ => return Err(self.unexpected(&token, "`.kernel`, `.file` or `.loc`")),
            }
        }
    }

    /// A PTX module-level directive: header lines, linkage prefixes, kernels,
    /// module-level variables.
    fn parse_ptx_module_item(&mut self) -> Result<()> {
        let token = self.peek().clone();
        let TokenKind::Directive(name) = &token.kind else {
            return Err(self.unexpected(&token, "a PTX directive"));
        };
        match name.as_str() {
            "version" | "target" => {
                // `.version 8.8`, `.target sm_90[, texmode_independent]`: the
                // rest of the line names what the code was compiled for.
                self.next();
                self.skip_rest_of_line(&token);
                Ok(())
            }
            "address_size" => {
                self.next();
                let (size, size_token) = self.expect_integer("an address size")?;
                if size != 64 {
                    return Err(self.error_at(&size_token, "only `.address_size 64` is supported"));
                }
                Ok(())
            }
            // Linkage does not matter to a single-module simulator.
            "visible" | "weak" | "common" => {
                self.next();
                Ok(())
            }
            "entry" => self.parse_kernel(),
            "section" => {
                // DWARF debug sections (`.section .debug_str { ... }`): the
                // `.loc` lines already carry what warpsim needs from them.
                self.next();
                while !self.is_punct('{') {
                    if self.peek().kind == TokenKind::End {
                        return Err(self.unexpected(&token, "`{` opening the section"));
                    }
                    self.next();
                }
                let mut depth = 0usize;
                loop {
                    let inner = self.next();
                    match inner.kind {
                        TokenKind::Punct('{') => depth += 1,
                        TokenKind::Punct('}') => {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(());
                            }
                        }
                        TokenKind::End => {
                            return Err(self.unexpected(&inner, "`}` closing the section"))
                        }
                        _ => {}
                    }
                }
            }
            "func" => self.parse_function_item(),
            "extern" if self.peek_at(1).kind == TokenKind::Directive("func".to_string()) => {
                self.next();
                self.parse_function_item()
            }
            "global" | "shared" | "const" | "extern" => {
                let symbol = self.parse_variable_declaration()?;
                self.module_symbols.push(symbol);
                Ok(())
            }
            other => Err(self.error_at(&token, format!("unsupported PTX directive `.{other}`"))),
        }
    }

    /// Skips the tokens left on `start`'s line.
    fn skip_rest_of_line(&mut self, start: &Token) {
        while self.peek().line == start.line && self.peek().kind != TokenKind::End {
            self.next();
        }
    }

    fn parse_file_directive(&mut self) -> Result<()> {
        self.next();
        let (number, number_token) = self.expect_integer("a file number")?;
        let token = self.next();
        let TokenKind::String(name) = token.kind else {
            return Err(self.unexpected(&token, "a quoted file name"));
        };
        // PTX may add the file's timestamp and size: `.file 1 "a.cu", 1700000000, 1234`.
        while self.eat_punct(',') {
            self.expect_integer("a timestamp or size")?;
        }
        if self.pending_files.remove(&number).is_some() {
            // Used by `.loc` lines above: its id exists, the name arrives now.
            let file = self.declared_files[&number];
            self.module.files[file.index()] = name;
        } else if self.declared_files.contains_key(&number) {
            return Err(self.error_at(&number_token, format!("file {number} is declared twice")));
        } else {
            self.module.files.push(name);
            self.declared_files
                .insert(number, FileId(self.module.files.len() as u32 - 1));
        }
        self.eat_punct(';');
        Ok(())
    }

    /// `.loc FILE LINE [COLUMN]`. In PTX it may go on with
    /// `, function_name LABEL[+N], inlined_at FILE LINE COLUMN`: the code is
    /// a function inlined at that place, which is itself inlined where the
    /// last `.loc` naming that place said. In `.kir` the whole chain is
    /// written out: `.loc 1 2 inlined_at 1 6 inlined_at 1 12`.
    fn parse_loc_directive(&mut self) -> Result<()> {
        self.next();
        let (file, line, column) = self.parse_loc_place()?;
        let mut inlined_at = None;
        if self.dialect == Dialect::Ptx {
            while self.eat_punct(',') {
                let (attribute, attribute_token) =
                    self.expect_word("`function_name` or `inlined_at`")?;
                match attribute.as_str() {
                    "function_name" => {
                        self.expect_word("a label of the `.debug_str` section")?;
                        if self.eat_punct('+') {
                            self.expect_integer("an offset")?;
                        }
                    }
                    "inlined_at" => {
                        let (at_file, at_line, at_column) = self.parse_loc_place()?;
                        // Where the call site was itself inlined: what the
                        // last `.loc` naming that place said.
                        let parent = self
                            .inlined_places
                            .get(&(at_file, at_line, at_column))
                            .copied()
                            .flatten();
                        inlined_at = Some(self.inline_site(InlineSite {
                            file: at_file,
                            line: at_line,
                            inlined_at: parent,
                        }));
                    }
                    _ => {
                        return Err(
                            self.unexpected(&attribute_token, "`function_name` or `inlined_at`")
                        )
                    }
                }
            }
            self.inlined_places.insert((file, line, column), inlined_at);
        } else {
            // `inlined_at` places, innermost first; the outermost is the root.
            let mut places = Vec::new();
            while self.peek().kind == TokenKind::Word("inlined_at".to_string()) {
                self.next();
                let (at_file, at_line, _) = self.parse_loc_place()?;
                places.push((at_file, at_line));
            }
            for &(at_file, at_line) in places.iter().rev() {
                inlined_at = Some(self.inline_site(InlineSite {
                    file: at_file,
                    line: at_line,
                    inlined_at,
                }));
            }
        }
        self.active_loc = Some(SourceLoc {
            file,
            line,
            inlined_at,
        });
        self.eat_punct(';');
        Ok(())
    }

    /// `FILE LINE [COLUMN]` of a `.loc` or an `inlined_at`, the column 0
    /// when left out.
    fn parse_loc_place(&mut self) -> Result<(FileId, u32, u64)> {
        let (number, number_token) = self.expect_integer("a file number")?;
        let (line, line_token) = self.expect_integer("a line number")?;
        let mut column = 0;
        if let TokenKind::Integer(value) = self.peek().kind {
            if self.peek().line == line_token.line {
                self.next();
                column = value;
            }
        }
        let file = match self.declared_files.get(&number) {
            Some(&file) => file,
            None if self.dialect == Dialect::Ptx => {
                self.module.files.push(String::new());
                let file = FileId(self.module.files.len() as u32 - 1);
                self.declared_files.insert(number, file);
                self.pending_files.insert(number, number_token.clone());
                file
            }
            None => {
                return Err(self.error_at(
                    &number_token,
                    format!("file {number} is not declared by a `.file` directive"),
                ))
            }
        };
        let line =
            u32::try_from(line).map_err(|_| self.error_at(&line_token, "line number too large"))?;
        Ok((file, line, column))
    }

    /// The id of an inline site, the same for the same site.
    fn inline_site(&mut self, site: InlineSite) -> InlineSiteId {
        if let Some(&id) = self.inline_site_ids.get(&site) {
            return id;
        }
        let id = InlineSiteId(self.module.inline_sites.len() as u32);
        self.module.inline_sites.push(site);
        self.inline_site_ids.insert(site, id);
        id
    }

    fn parse_kernel(&mut self) -> Result<()> {
        let kernel_token = self.next();
        let loc = self.loc_for(&kernel_token);
        let (name, name_token) = self.expect_word("the kernel name")?;
        if name.contains('.') {
            return Err(self.error_at(&name_token, "a kernel name may not contain `.`"));
        }
        if self.module.kernel(&name).is_some() {
            return Err(self.error_at(&name_token, format!("kernel `{name}` is defined twice")));
        }
        let mut scope = KernelScope::new(name, loc);
        self.parse_parenthesized_list(|parser| {
            let param_token = parser.next();
            if param_token.kind != TokenKind::Directive("param".to_string()) {
                return Err(parser.unexpected(&param_token, "`.param`"));
            }
            // Parameters are located at their kernel: the header is one item.
            let loc = scope.kernel.loc;
            let mut align = parser.parse_param_attributes()?;
            let (ty, ty_token) = parser.expect_type_directive()?;
            if ty == ScalarType::Pred {
                return Err(parser.error_at(&ty_token, "a parameter cannot be a predicate"));
            }
            // PTX: `.param .u64 .ptr .global .align 4 name`.
            align = align.max(parser.parse_param_attributes()?);
            let (name, name_token) = parser.expect_word("a parameter name")?;
            // A struct passed by value is an array of bytes:
            // `.param .align 8 .b8 p[24]`.
            let (len, is_array) = if parser.eat_punct('[') {
                let (len, len_token) = parser.expect_integer("an array length")?;
                parser.expect_punct(']')?;
                // CUDA allows 32,764 bytes of kernel parameters (sm_70+).
                if len == 0 || len * u64::from(ty.size_bytes()) > 32_764 {
                    return Err(parser.error_at(
                        &len_token,
                        "a parameter array must have between 1 element and 32764 bytes",
                    ));
                }
                (len, true)
            } else {
                (1, false)
            };
            parser.declare_symbol(
                &mut scope,
                &name_token,
                Symbol {
                    name,
                    space: StateSpace::Param,
                    ty,
                    len: Some(len),
                    is_array,
                    align: align.max(ty.size_bytes()),
                    init: Vec::new(),
                    loc,
                },
            )?;
            Ok(())
        })?;
        if self.dialect == Dialect::Ptx {
            self.skip_performance_directives();
        }
        self.declare_module_symbols(&mut scope)?;
        self.expect_punct('{')?;
        self.parse_body(&mut scope, "the kernel")?;
        self.check_labels_defined(&scope)?;
        for (index, name) in scope.label_names.iter().enumerate() {
            // Every label is defined: those of inlined functions were
            // checked when their body ended, the kernel's just now.
            let target = scope.label_sites[index].0.unwrap_or(InstrId(0));
            scope.kernel.labels.push(Label {
                name: name.clone(),
                target,
            });
        }
        self.module.kernels.push(scope.kernel);
        Ok(())
    }

    /// Module-level variables are visible in every kernel that follows them,
    /// and in the device functions inlined into it.
    fn declare_module_symbols(&mut self, scope: &mut KernelScope) -> Result<()> {
        for (symbol, token) in self.module_symbols.clone() {
            let name = symbol.name.clone();
            let id = self.declare_symbol(scope, &token, symbol)?;
            scope.module_symbol_ids.push((name, id));
        }
        Ok(())
    }

    /// The statements of a body up to the `}` that closes it (the `{` is
    /// already read). PTX bodies may open nested `{ }` scopes: their
    /// instructions join the body, and the registers and variables they
    /// declare are visible only inside them.
    fn parse_body(&mut self, scope: &mut KernelScope, what: &str) -> Result<()> {
        let base = scope.scope_frames.len();
        loop {
            let token = self.peek().clone();
            match &token.kind {
                TokenKind::Punct('{') if self.dialect == Dialect::Ptx => {
                    self.next();
                    scope.scope_frames.push(ScopeFrame::default());
                }
                TokenKind::Punct('}') => {
                    self.next();
                    if scope.scope_frames.len() == base {
                        return Ok(());
                    }
                    if let Some(frame) = scope.scope_frames.pop() {
                        for (name, outer) in frame.regs.into_iter().rev() {
                            match outer {
                                Some(reg) => scope.regs.insert(name, reg),
                                None => scope.regs.shift_remove(&name),
                            };
                        }
                        for (name, outer) in frame.symbols.into_iter().rev() {
                            match outer {
                                Some(symbol) => scope.symbols.insert(name, symbol),
                                None => scope.symbols.shift_remove(&name),
                            };
                        }
                    }
                }
                TokenKind::Directive(name) if name == "pragma" && self.dialect == Dialect::Ptx => {
                    self.next();
                    self.skip_rest_of_line(&token);
                }
                TokenKind::End => {
                    return Err(self.unexpected(&token, &format!("`}}` to close {what}")));
                }
                TokenKind::Directive(name) => match name.as_str() {
                    "loc" => self.parse_loc_directive()?,
                    "reg" => self.parse_reg_declaration(scope)?,
                    "shared" | "local" | "const" | "global" | "extern" => {
                        let (symbol, name_token) = self.parse_variable_declaration()?;
                        self.declare_body_symbol(scope, &name_token, symbol)?;
                    }
                    // A call sequence's arguments and return value: `.param .b32 param0;`.
                    "param" if self.dialect == Dialect::Ptx => {
                        let (symbol, name_token) = self.parse_variable_declaration()?;
                        self.declare_symbol(scope, &name_token, symbol)?;
                    }
                    "callprototype" if self.dialect == Dialect::Ptx => {
                        return Err(self.error_at(
                            &token,
                            "indirect calls (`.callprototype`) are not supported: only calls that name their function",
                        ))
                    }
                    _ => {
                        return Err(self.unexpected(
                            &token,
                            "a declaration (`.reg`, `.shared`, `.local`, `.const`, `.global`, `.extern`), a label or an instruction",
                        ))
                    }
                },
                TokenKind::Word(word) if self.peek_at(1).kind == TokenKind::Punct(':') => {
                    let word = word.clone();
                    self.next();
                    self.next();
                    let target = InstrId(scope.kernel.instrs.len() as u32);
                    let id = self.label_id(scope, &word, &token);
                    let site = &mut scope.label_sites[id.index()];
                    if site.0.is_some() {
                        return Err(self.error_at(&token, format!("label `{word}` is defined twice")));
                    }
                    site.0 = Some(target);
                }
                _ if self.dialect == Dialect::Ptx && self.is_call_next() => {
                    self.parse_call(scope)?;
                }
                _ => {
                    let instr = self.parse_instruction(scope)?;
                    scope.kernel.instrs.push(instr);
                }
            }
        }
    }

    /// Fails on the first label (in order of first mention) of the names
    /// visible now that no statement defines.
    fn check_labels_defined(&self, scope: &KernelScope) -> Result<()> {
        for (name, &id) in &scope.labels {
            let (target, first_use) = &scope.label_sites[id.index()];
            if target.is_none() {
                return Err(self.error_at(first_use, format!("label `{name}` is never defined")));
            }
        }
        Ok(())
    }

    /// The label a statement names. Inside an inlined device function the
    /// label is the callee's own, named after the call (`$L__BB0_2$call1`), so
    /// that two calls of one function get distinct labels.
    fn label_id(&self, scope: &mut KernelScope, name: &str, token: &Token) -> LabelId {
        if let Some(&id) = scope.labels.get(name) {
            return id;
        }
        let printed = match scope.inline_stack.last() {
            Some((_, call)) => format!("{name}$call{call}"),
            None => name.to_string(),
        };
        self.new_label(scope, name, printed, token)
    }

    /// A label visible as `key` and printed as `printed` (made unique).
    fn new_label(
        &self,
        scope: &mut KernelScope,
        key: &str,
        printed: String,
        token: &Token,
    ) -> LabelId {
        let id = LabelId(scope.label_names.len() as u32);
        let mut unique = printed.clone();
        let mut counter = 1;
        while scope.label_name_set.contains(&unique) {
            unique = format!("{printed}${counter}");
            counter += 1;
        }
        scope.label_name_set.insert(unique.clone());
        scope.label_names.push(unique);
        scope.labels.insert(key.to_string(), id);
        scope.label_sites.push((None, token.clone()));
        id
    }

    /// Declares a variable visible from here to the end of the scope. In a
    /// nested scope it may shadow an outer one of the same name; the kernel
    /// keeps every variable, under a name of its own where two would clash.
    fn declare_symbol(
        &self,
        scope: &mut KernelScope,
        token: &Token,
        mut symbol: Symbol,
    ) -> Result<SymbolId> {
        if symbol.name.contains('.') {
            return Err(self.error_at(token, "a variable name may not contain `.`"));
        }
        let visible = symbol.name.clone();
        let declared_here = scope
            .scope_frames
            .last()
            .is_some_and(|frame| frame.symbols.iter().any(|(name, _)| *name == visible));
        let outer = scope.symbols.get(&visible).copied();
        if declared_here || (outer.is_some() && scope.scope_frames.is_empty()) {
            return Err(self.error_at(token, format!("`{visible}` is declared twice")));
        }
        if scope.kernel.symbols.len() >= 1 << 20 {
            return Err(self.error_at(token, "too many variables in one kernel"));
        }
        let mut counter = 1;
        while scope.kernel.symbols.iter().any(|s| s.name == symbol.name) {
            symbol.name = format!("{visible}${counter}");
            counter += 1;
        }
        if let Some(frame) = scope.scope_frames.last_mut() {
            frame.symbols.push((visible.clone(), outer));
        }
        let id = SymbolId(scope.kernel.symbols.len() as u32);
        scope.symbols.insert(visible, id);
        scope.kernel.symbols.push(symbol);
        Ok(id)
    }

    /// A variable declared in a body. Inside a device function, `.shared`,
    /// `.global` and `.const` variables are static: every call of the
    /// function in one kernel uses the same one.
    fn declare_body_symbol(
        &self,
        scope: &mut KernelScope,
        token: &Token,
        symbol: Symbol,
    ) -> Result<SymbolId> {
        let Some((function, _)) = scope.inline_stack.last() else {
            return self.declare_symbol(scope, token, symbol);
        };
        if symbol.space == StateSpace::Local {
            return self.declare_symbol(scope, token, symbol);
        }
        let key = (function.clone(), symbol.name.clone());
        match scope.function_statics.get(&key) {
            Some(&id) => {
                let visible = symbol.name;
                let outer = scope.symbols.get(&visible).copied();
                if let Some(frame) = scope.scope_frames.last_mut() {
                    if frame.symbols.iter().any(|(name, _)| *name == visible) {
                        return Err(self.error_at(token, format!("`{visible}` is declared twice")));
                    }
                    frame.symbols.push((visible.clone(), outer));
                }
                scope.symbols.insert(visible, id);
                Ok(id)
            }
            None => {
                let id = self.declare_symbol(scope, token, symbol)?;
                scope.function_statics.insert(key, id);
                Ok(id)
            }
        }
    }

    /// `.reg .u32 %a, %b<4>;`
    fn parse_reg_declaration(&mut self, scope: &mut KernelScope) -> Result<()> {
        self.next();
        let (ty, _) = self.expect_type_directive()?;
        loop {
            let token = self.next();
            // NVRTC's call sequences declare `.reg .b32 temp_param_reg;`, a
            // register named without `%`: it is visible by that name, and
            // printed with a `%` so that `.kir` text can spell it.
            let name = match &token.kind {
                TokenKind::Register(name) => name.clone(),
                TokenKind::Word(name) if self.dialect == Dialect::Ptx && !name.contains('.') => {
                    name.clone()
                }
                _ => return Err(self.unexpected(&token, "a register name such as `%r1`")),
            };
            if SpecialReg::is_reserved_name(&name) || SpecialReg::from_name(&name).is_some() {
                return Err(self.error_at(
                    &token,
                    format!("`{name}` is a special register and cannot be declared"),
                ));
            }
            if self.eat_punct('<') {
                let (count, count_token) = self.expect_integer("a register count")?;
                self.expect_punct('>')?;
                if count == 0 || count > 65_536 {
                    return Err(self.error_at(
                        &count_token,
                        "a register range must declare between 1 and 65536 registers",
                    ));
                }
                for index in 0..count {
                    self.declare_register(scope, &token, format!("{name}{index}"), ty)?;
                }
            } else {
                self.declare_register(scope, &token, name, ty)?;
            }
            if !self.eat_punct(',') {
                break;
            }
        }
        self.end_statement()
    }

    fn declare_register(
        &self,
        scope: &mut KernelScope,
        token: &Token,
        name: String,
        ty: ScalarType,
    ) -> Result<()> {
        let declared_here = scope
            .scope_frames
            .last()
            .is_some_and(|frame| frame.regs.iter().any(|(declared, _)| *declared == name));
        let outer = scope.regs.get(&name).copied();
        if declared_here || (outer.is_some() && scope.scope_frames.is_empty()) {
            return Err(self.error_at(token, format!("register `{name}` is declared twice")));
        }
        if scope.kernel.regs.len() >= 1 << 20 {
            return Err(self.error_at(token, "too many registers in one kernel"));
        }
        // Inside a nested scope the register is a new one: it gets a name of
        // its own (`%p1$2`), which `.kir` text can spell, so printing keeps
        // every register distinct.
        // A register of an inlined device function gets such a name too, so
        // that it cannot collide with the caller's. The name is the printed
        // one: a name without `%` gets one.
        let printed = if name.starts_with('%') {
            name.clone()
        } else {
            format!("%{name}")
        };
        let unique = if scope.scope_frames.is_empty() && !scope.reg_names.contains(&printed) {
            printed
        } else {
            let mut counter = scope.kernel.regs.len();
            loop {
                let candidate = format!("{printed}${counter}");
                if !scope.reg_names.contains(&candidate) {
                    break candidate;
                }
                counter += 1;
            }
        };
        if let Some(frame) = scope.scope_frames.last_mut() {
            frame.regs.push((name.clone(), outer));
        }
        let id = RegId(scope.kernel.regs.len() as u32);
        scope.regs.insert(name, id);
        scope.reg_names.insert(unique.clone());
        scope.kernel.regs.push(RegDecl { name: unique, ty });
        Ok(())
    }

    /// `[.extern] .shared|.local|.const|.global [.align N] .type name[N]|name[]|name [= values];`
    fn parse_variable_declaration(&mut self) -> Result<(Symbol, Token)> {
        let first = self.next();
        let loc = self.loc_for(&first);
        let is_extern = first.kind == TokenKind::Directive("extern".to_string());
        let space_token = if is_extern {
            self.next()
        } else {
            first.clone()
        };
        let space = match &space_token.kind {
            TokenKind::Directive(name) if name == "shared" => StateSpace::Shared,
            TokenKind::Directive(name) if name == "local" && !is_extern => StateSpace::Local,
            TokenKind::Directive(name) if name == "const" && !is_extern => StateSpace::Const,
            TokenKind::Directive(name) if name == "global" && !is_extern => StateSpace::Global,
            // A `.param` variable of a call sequence (PTX) holds an argument
            // or a return value of an inlined call: per-thread storage.
            TokenKind::Directive(name) if name == "param" && !is_extern => StateSpace::Local,
            _ => return Err(self.unexpected(&space_token, "`.shared` after `.extern`")),
        };
        let mut align = None;
        if self.peek().kind == TokenKind::Directive("align".to_string()) {
            self.next();
            align = Some(self.expect_alignment()?);
        }
        let (ty, ty_token) = self.expect_type_directive()?;
        if ty == ScalarType::Pred {
            return Err(self.error_at(&ty_token, "a variable cannot have the predicate type"));
        }
        let (name, name_token) = self.expect_word("a variable name")?;
        let (len, is_array) = if self.eat_punct('[') {
            if self.eat_punct(']') {
                if !is_extern {
                    return Err(self.error_at(
                        &name_token,
                        "only an `.extern .shared` array may leave out its length",
                    ));
                }
                (None, true)
            } else {
                let (len, len_token) = self.expect_integer("an array length")?;
                self.expect_punct(']')?;
                if len == 0 || len > (1 << 32) {
                    return Err(
                        self.error_at(&len_token, "array length must be between 1 and 2^32")
                    );
                }
                if is_extern {
                    return Err(
                        self.error_at(&len_token, "an `.extern .shared` array has no length")
                    );
                }
                (Some(len), true)
            }
        } else {
            if is_extern {
                return Err(self.error_at(
                    &name_token,
                    "an `.extern .shared` variable must be an array `name[]`",
                ));
            }
            (Some(1), false)
        };
        // `.const` data may be given: `= { 1.0, 2.0 }` for an array, `= 3` for a scalar.
        let mut init = Vec::new();
        if self.eat_punct('=') {
            if !matches!(space, StateSpace::Const | StateSpace::Global) {
                return Err(self.error_at(
                    &name_token,
                    "only `.const` and `.global` variables take initial values",
                ));
            }
            let capacity = len.unwrap_or(1);
            if is_array {
                self.expect_punct('{')?;
                loop {
                    let token = self.peek().clone();
                    init.push(self.parse_literal(ty)?);
                    if init.len() as u64 > capacity {
                        return Err(self.error_at(
                            &token,
                            format!("`{name}` has {capacity} elements, but more values are given"),
                        ));
                    }
                    if !self.eat_punct(',') {
                        break;
                    }
                }
                self.expect_punct('}')?;
            } else {
                init.push(self.parse_literal(ty)?);
            }
        }
        let align = align.unwrap_or(ty.size_bytes()).max(ty.size_bytes());
        let symbol = Symbol {
            name,
            space,
            ty,
            len,
            is_array,
            align,
            init,
            loc,
        };
        self.end_statement()?;
        Ok((symbol, name_token))
    }

    /// The `N` of `.align N`: a power of two up to 4096.
    fn expect_alignment(&mut self) -> Result<u32> {
        let (value, token) = self.expect_integer("an alignment in bytes")?;
        if !value.is_power_of_two() || value > 4096 {
            return Err(self.error_at(&token, "alignment must be a power of two up to 4096"));
        }
        Ok(value as u32)
    }

    /// `(item, item, ...)`, possibly empty: each item parsed by `parse_item`.
    fn parse_parenthesized_list<T>(
        &mut self,
        mut parse_item: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.expect_punct('(')?;
        let mut list = Vec::new();
        if self.eat_punct(')') {
            return Ok(list);
        }
        loop {
            list.push(parse_item(self)?);
            if self.eat_punct(')') {
                return Ok(list);
            }
            self.expect_punct(',')?;
        }
    }

    /// PTX performance directives after a kernel's parameters, e.g.
    /// `.maxntid 256, 1, 1`: hints to the compiler, nothing to simulate.
    fn skip_performance_directives(&mut self) {
        while let TokenKind::Directive(name) = &self.peek().kind {
            if !matches!(
                name.as_str(),
                "maxntid"
                    | "reqntid"
                    | "minnctapersm"
                    | "maxnctapersm"
                    | "maxnreg"
                    | "maxclusterrank"
                    | "reqnctapercluster"
                    | "explicitcluster"
                    | "noreturn"
            ) {
                break;
            }
            self.next();
            while matches!(
                self.peek().kind,
                TokenKind::Integer(_) | TokenKind::Punct(',')
            ) {
                self.next();
            }
        }
    }

    fn parse_instruction(&mut self, scope: &mut KernelScope) -> Result<Instr> {
        let start = self.peek().clone();
        let loc = self.loc_for(&start);
        let guard = self.parse_guard(scope)?;
        let (opcode, opcode_token) = self.expect_word("an instruction")?;
        let mut parts = opcode.split('.');
        let mnemonic = parts.next().unwrap_or_default().to_string();
        let modifiers: Vec<String> = parts.map(str::to_string).collect();
        let mut mods = Modifiers {
            list: modifiers,
            used: Vec::new(),
        };
        mods.used = vec![false; mods.list.len()];
        let op = self.parse_op(scope, &mnemonic, &mut mods, &opcode_token)?;
        if let Some(unused) = mods.first_unused() {
            return Err(self.error_at(
                &opcode_token,
                format!("`{opcode}`: modifier `.{unused}` is not valid here"),
            ));
        }
        self.end_statement()?;
        Ok(Instr { guard, op, loc })
    }

    /// An optional guard, `@%p` or `@!%p`.
    fn parse_guard(&mut self, scope: &KernelScope) -> Result<Option<Guard>> {
        if !self.eat_punct('@') {
            return Ok(None);
        }
        let negated = self.eat_punct('!');
        let (reg, token) = self.parse_register(scope)?;
        if scope.kernel.reg(reg).ty != ScalarType::Pred {
            return Err(self.error_at(&token, "a guard must be a `.pred` register"));
        }
        Ok(Some(Guard { reg, negated }))
    }

    fn parse_op(
        &mut self,
        scope: &mut KernelScope,
        mnemonic: &str,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        // The dot products, carry chains and narrow-float conversions (`parser/scalar.rs`).
        if let Some(op) = self.parse_scalar_extension(scope, mnemonic, mods, opcode)? {
            return Ok(op);
        }
        let binary = |op| Some(op);
        let binary_op = match mnemonic {
            "add" => binary(BinaryOp::Add),
            "sub" => binary(BinaryOp::Sub),
            "div" => binary(BinaryOp::Div),
            "rem" => binary(BinaryOp::Rem),
            "min" if mods.take("NaN") => binary(BinaryOp::MinNan),
            "max" if mods.take("NaN") => binary(BinaryOp::MaxNan),
            "min" => binary(BinaryOp::Min),
            "max" => binary(BinaryOp::Max),
            "and" => binary(BinaryOp::And),
            "or" => binary(BinaryOp::Or),
            "xor" => binary(BinaryOp::Xor),
            "shl" => binary(BinaryOp::Shl),
            "shr" => binary(BinaryOp::Shr),
            "mul" => {
                if mods.take("lo") {
                    binary(BinaryOp::Mul)
                } else if mods.take("hi") {
                    binary(BinaryOp::MulHi)
                } else if mods.take("wide") {
                    binary(BinaryOp::MulWide)
                } else {
                    binary(BinaryOp::Mul)
                }
            }
            _ => None,
        };
        if let Some(op) = binary_op {
            let saturate = mods.take("sat");
            mods.take_float_modes();
            let ty = self.take_type(mods, opcode)?;
            if op == BinaryOp::Mul && ty.is_integer() && !mods.was_taken("lo") {
                return Err(self.error_at(opcode, "integer `mul` needs `.lo`, `.hi` or `.wide`"));
            }
            let dst = self.parse_destination(scope)?;
            let b_ty = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
                ScalarType::U32
            } else {
                ty
            };
            let [a, b] = self.parse_sources(scope, [ty, b_ty])?;
            return Ok(Op::Binary {
                op,
                ty,
                saturate,
                dst,
                a,
                b,
            });
        }
        let unary = match mnemonic {
            "mov" => Some(UnaryOp::Mov),
            "neg" => Some(UnaryOp::Neg),
            "abs" => Some(UnaryOp::Abs),
            "not" => Some(UnaryOp::Not),
            "popc" => Some(UnaryOp::Popc),
            "clz" => Some(UnaryOp::Clz),
            "brev" => Some(UnaryOp::Brev),
            "sqrt" => Some(UnaryOp::Sqrt),
            "rcp" => Some(UnaryOp::Rcp),
            "rsqrt" => Some(UnaryOp::Rsqrt),
            "ex2" => Some(UnaryOp::Ex2),
            "lg2" => Some(UnaryOp::Lg2),
            "sin" => Some(UnaryOp::Sin),
            "cos" => Some(UnaryOp::Cos),
            "bfind" if mods.take("shiftamt") => Some(UnaryOp::BfindShiftAmount),
            "bfind" => Some(UnaryOp::Bfind),
            _ => None,
        };
        if let Some(op) = unary {
            mods.take_float_modes();
            mods.take("approx");
            let ty = self.take_type(mods, opcode)?;
            if op == UnaryOp::Mov {
                return self.parse_mov(scope, ty, opcode);
            }
            let dst = self.parse_destination(scope)?;
            let [a] = self.parse_sources(scope, [ty])?;
            return Ok(Op::Unary { op, ty, dst, a });
        }
        match mnemonic {
            "mad" | "fma" => {
                let mode = if mods.take("lo") {
                    MulAddMode::Lo
                } else if mods.take("hi") {
                    MulAddMode::Hi
                } else if mods.take("wide") {
                    MulAddMode::Wide
                } else if mods.take("relu") {
                    // `fma.rn.relu`: `.rn` is taken with the float modes below.
                    MulAddMode::FusedRelu
                } else if let Some(rounding) = mods.take_map(|m| match m {
                    "rz" => Some(Rounding::Rz),
                    "rm" => Some(Rounding::Rm),
                    "rp" => Some(Rounding::Rp),
                    _ => None,
                }) {
                    MulAddMode::FusedDirected(rounding)
                } else {
                    MulAddMode::Fused
                };
                let saturate = mods.take("sat");
                mods.take_float_modes();
                let ty = self.take_type(mods, opcode)?;
                let fused = matches!(
                    mode,
                    MulAddMode::Fused | MulAddMode::FusedRelu | MulAddMode::FusedDirected(_)
                );
                if fused != ty.is_float() {
                    return Err(self.error_at(
                        opcode,
                        "`fma` takes a float type; integer `mad` needs `.lo`, `.hi` or `.wide`",
                    ));
                }
                let dst = self.parse_destination(scope)?;
                let c_ty = if mode == MulAddMode::Wide {
                    widen(ty).unwrap_or(ty)
                } else {
                    ty
                };
                let [a, b, c] = self.parse_sources(scope, [ty, ty, c_ty])?;
                Ok(Op::MulAdd {
                    mode,
                    ty,
                    saturate,
                    dst,
                    a,
                    b,
                    c,
                })
            }
            "setp" => {
                let cmp = self.take_from(mods, opcode, "a comparison such as `.lt`", |m| {
                    CmpOp::ALL.into_iter().find(|c| c.name() == m)
                })?;
                let combine_op = mods.take_bool_op();
                mods.take("ftz");
                let ty = self.take_type(mods, opcode)?;
                let dst = self.parse_destination(scope)?;
                let dst_not = if self.eat_punct('|') {
                    Some(self.parse_destination(scope)?)
                } else {
                    None
                };
                let [a, b] = self.parse_sources(scope, [ty, ty])?;
                let combine = match combine_op {
                    Some(op) => {
                        self.expect_punct(',')?;
                        Some((op, self.parse_pred_operand(scope)?))
                    }
                    None => None,
                };
                Ok(Op::Setp {
                    cmp,
                    ty,
                    dst,
                    dst_not,
                    a,
                    b,
                    combine,
                })
            }
            "set" => {
                let cmp = self.take_from(mods, opcode, "a comparison such as `.lt`", |m| {
                    CmpOp::ALL.into_iter().find(|c| c.name() == m)
                })?;
                let combine_op = mods.take_bool_op();
                mods.take("ftz");
                let dst_ty = self.take_type(mods, opcode)?;
                let src_ty = self.take_type(mods, opcode)?;
                let dst = self.parse_destination(scope)?;
                let [a, b] = self.parse_sources(scope, [src_ty, src_ty])?;
                let combine = match combine_op {
                    Some(op) => {
                        self.expect_punct(',')?;
                        Some((op, self.parse_pred_operand(scope)?))
                    }
                    None => None,
                };
                Ok(Op::Set {
                    cmp,
                    dst_ty,
                    src_ty,
                    dst,
                    a,
                    b,
                    combine,
                })
            }
            "selp" => {
                let ty = self.take_type(mods, opcode)?;
                let dst = self.parse_destination(scope)?;
                let [a, b] = self.parse_sources(scope, [ty, ty])?;
                self.expect_punct(',')?;
                let cond = self.parse_pred_operand(scope)?;
                Ok(Op::Selp {
                    ty,
                    dst,
                    a,
                    b,
                    cond,
                })
            }
            "cvt" => {
                let rounding = mods.take_map(|m| Rounding::ALL.into_iter().find(|r| r.name() == m));
                mods.take("ftz");
                let saturate = mods.take("sat");
                let dst_ty = self.take_type(mods, opcode)?;
                let src_ty = self.take_type(mods, opcode)?;
                if dst_ty.is_half_pair() {
                    return self.parse_cvt_pair(scope, dst_ty, src_ty, rounding, saturate, opcode);
                }
                let dst = self.parse_destination(scope)?;
                let [src] = self.parse_sources(scope, [src_ty])?;
                Ok(Op::Cvt {
                    dst_ty,
                    src_ty,
                    rounding,
                    saturate,
                    dst,
                    src,
                })
            }
            "ld" | "st" => {
                let space = mods
                    .take_map(StateSpace::from_name)
                    .unwrap_or(StateSpace::Generic);
                let order = self.take_memory_order(mods, opcode)?;
                // Cache and non-coherence hints change nothing the simulator models.
                for hint in ["nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt"] {
                    mods.take(hint);
                }
                let vector = if mods.take("v2") {
                    2
                } else if mods.take("v4") {
                    4
                } else {
                    1
                };
                let ty = self.take_type(mods, opcode)?;
                if mnemonic == "ld" {
                    let dst = if vector == 1 {
                        vec![self.parse_destination(scope)?]
                    } else {
                        self.parse_register_vector(scope, vector)?
                    };
                    self.expect_punct(',')?;
                    let addr = self.parse_address(scope)?;
                    let space = self.call_parameter_space(scope, space, &addr);
                    Ok(Op::Load {
                        space,
                        order,
                        ty,
                        dst,
                        addr,
                    })
                } else {
                    let addr = self.parse_address(scope)?;
                    let space = self.call_parameter_space(scope, space, &addr);
                    self.expect_punct(',')?;
                    let src = if vector == 1 {
                        vec![self.parse_operand(scope, ty)?]
                    } else {
                        self.expect_punct('{')?;
                        let mut src = Vec::new();
                        for index in 0..vector {
                            if index > 0 {
                                self.expect_punct(',')?;
                            }
                            src.push(self.parse_operand(scope, ty)?);
                        }
                        self.expect_punct('}')?;
                        src
                    };
                    Ok(Op::Store {
                        space,
                        order,
                        ty,
                        addr,
                        src,
                    })
                }
            }
            "atom" | "red" => {
                let space = mods
                    .take_map(StateSpace::from_name)
                    .unwrap_or(StateSpace::Generic);
                // `.noftz` is how the half-precision atomics are spelled
                // (`atom.add.noftz.bf16`); the machine never flushes
                // subnormals, so it changes nothing (the lowering refuses
                // atomics on halves with a message of its own).
                mods.take("noftz");
                let semantics = if mods.take("acq_rel") {
                    AtomicSemantics::AcquireRelease
                } else if mods.take("acquire") {
                    AtomicSemantics::Acquire
                } else if mods.take("release") {
                    AtomicSemantics::Release
                } else {
                    mods.take("relaxed");
                    AtomicSemantics::Relaxed
                };
                let order = AtomicOrder {
                    semantics,
                    scope: self.take_scope(mods).unwrap_or(Scope::Gpu),
                };
                let op =
                    self.take_from(mods, opcode, "an atomic operation such as `.add`", |m| {
                        AtomOp::ALL.into_iter().find(|op| op.name() == m)
                    })?;
                let ty = self.take_type(mods, opcode)?;
                let dst = if mnemonic == "atom" {
                    let dst = self.parse_destination(scope)?;
                    self.expect_punct(',')?;
                    Some(dst)
                } else {
                    None
                };
                let addr = self.parse_address(scope)?;
                self.expect_punct(',')?;
                let operand_ty = if matches!(op, AtomOp::Inc | AtomOp::Dec) {
                    ScalarType::U32
                } else {
                    ty
                };
                let a = self.parse_operand(scope, operand_ty)?;
                let b = if op == AtomOp::Cas {
                    if dst.is_none() {
                        return Err(
                            self.error_at(opcode, "`red` has no `.cas` form; use `atom.cas`")
                        );
                    }
                    self.expect_punct(',')?;
                    Some(self.parse_operand(scope, ty)?)
                } else {
                    None
                };
                Ok(Op::Atom {
                    space,
                    order,
                    op,
                    ty,
                    dst,
                    addr,
                    a,
                    b,
                })
            }
            "bar" | "barrier" => {
                if mnemonic == "bar" && mods.take("warp") {
                    if !mods.take("sync") {
                        return Err(self.error_at(opcode, "expected `bar.warp.sync`"));
                    }
                    let mask = self.parse_operand(scope, ScalarType::B32)?;
                    return Ok(Op::WarpSync { mask });
                }
                let kind = if mods.take("sync") {
                    BarrierKind::Sync
                } else if mods.take("arrive") {
                    BarrierKind::Arrive
                } else if mods.take("red") {
                    let reduction = if mods.take("popc") {
                        BarrierReduction::Popc
                    } else if mods.take("and") {
                        BarrierReduction::And
                    } else if mods.take("or") {
                        BarrierReduction::Or
                    } else {
                        return Err(
                            self.error_at(opcode, "`bar.red` needs `.popc`, `.and` or `.or`")
                        );
                    };
                    let expected_ty = if reduction == BarrierReduction::Popc {
                        ScalarType::U32
                    } else {
                        ScalarType::Pred
                    };
                    let ty = self.take_type(mods, opcode)?;
                    if ty != expected_ty {
                        return Err(self.error_at(
                            opcode,
                            format!("`bar.red` with this reduction takes `.{expected_ty}`"),
                        ));
                    }
                    BarrierKind::Reduce(reduction)
                } else {
                    return Err(self.error_at(
                        opcode,
                        "expected `bar.sync`, `bar.arrive`, `bar.red` or `bar.warp.sync`",
                    ));
                };
                // `barrier.sync.aligned` is what `__syncthreads` compiles to; `.aligned`
                // states a promise the checker verifies, not a different operation.
                mods.take("aligned");
                let destination = if matches!(kind, BarrierKind::Reduce(_)) {
                    let dst = self.parse_destination(scope)?;
                    self.expect_punct(',')?;
                    Some(dst)
                } else {
                    None
                };
                let id = self.parse_operand(scope, ScalarType::U32)?;
                let mut count = None;
                let mut reduction = None;
                if let Some(dst) = destination {
                    self.expect_punct(',')?;
                    // `bar.red dst, id, [count,] pred`: a predicate last, count optional.
                    if self.is_pred_operand_next(scope) {
                        reduction = Some((dst, self.parse_pred_operand(scope)?));
                    } else {
                        count = Some(self.parse_operand(scope, ScalarType::U32)?);
                        self.expect_punct(',')?;
                        reduction = Some((dst, self.parse_pred_operand(scope)?));
                    }
                } else if self.eat_punct(',') {
                    count = Some(self.parse_operand(scope, ScalarType::U32)?);
                }
                if kind == BarrierKind::Arrive && count.is_none() {
                    return Err(self.error_at(opcode, "`bar.arrive` needs a thread count"));
                }
                Ok(Op::Barrier {
                    kind,
                    id,
                    count,
                    reduction,
                })
            }
            "membar" => {
                let scope = if mods.take("cta") {
                    Scope::Cta
                } else if mods.take("gl") {
                    Scope::Gpu
                } else if mods.take("sys") {
                    Scope::Sys
                } else {
                    return Err(self.error_at(opcode, "`membar` needs `.cta`, `.gl` or `.sys`"));
                };
                Ok(Op::Fence {
                    kind: FenceKind::Membar,
                    scope,
                })
            }
            "fence" => {
                let kind = if mods.take("sc") {
                    FenceKind::SequentiallyConsistent
                } else {
                    mods.take("acq_rel");
                    FenceKind::AcquireRelease
                };
                let scope = self.take_scope(mods).ok_or_else(|| {
                    self.error_at(opcode, "`fence` needs a scope: `.cta`, `.gpu` or `.sys`")
                })?;
                Ok(Op::Fence { kind, scope })
            }
            // Tensor-core instructions (PTX ISA 9.7.14).
            "ldmatrix" | "stmatrix" => self.parse_matrix_access(scope, mnemonic, mods, opcode),
            "mma" => self.parse_mma(scope, mods, opcode),
            "wmma" => self.parse_wmma(scope, mods, opcode),
            "shfl" => {
                if !mods.take("sync") {
                    return Err(self.error_at(opcode, "only `shfl.sync` is supported"));
                }
                let mode =
                    self.take_from(mods, opcode, "`.up`, `.down`, `.bfly` or `.idx`", |m| {
                        [
                            ShuffleMode::Up,
                            ShuffleMode::Down,
                            ShuffleMode::Butterfly,
                            ShuffleMode::Index,
                        ]
                        .into_iter()
                        .find(|mode| mode.name() == m)
                    })?;
                let ty = self.take_type(mods, opcode)?;
                if ty != ScalarType::B32 {
                    return Err(self.error_at(opcode, "`shfl.sync` takes `.b32`"));
                }
                let dst = self.parse_destination(scope)?;
                let dst_pred = if self.eat_punct('|') {
                    Some(self.parse_destination(scope)?)
                } else {
                    None
                };
                let [a, b, c, mask] = self.parse_sources(scope, [ScalarType::B32; 4])?;
                Ok(Op::Shuffle {
                    mode,
                    dst,
                    dst_pred,
                    a,
                    b,
                    c,
                    mask,
                })
            }
            "vote" => {
                if !mods.take("sync") {
                    return Err(self.error_at(opcode, "only `vote.sync` is supported"));
                }
                let mode =
                    self.take_from(mods, opcode, "`.all`, `.any`, `.uni` or `.ballot`", |m| {
                        [
                            VoteMode::All,
                            VoteMode::Any,
                            VoteMode::Uniform,
                            VoteMode::Ballot,
                        ]
                        .into_iter()
                        .find(|mode| mode.name() == m)
                    })?;
                let ty = self.take_type(mods, opcode)?;
                let expected = if mode == VoteMode::Ballot {
                    ScalarType::B32
                } else {
                    ScalarType::Pred
                };
                if ty != expected {
                    return Err(self.error_at(
                        opcode,
                        format!("`vote.sync.{}` takes `.{expected}`", mode.name()),
                    ));
                }
                let dst = self.parse_destination(scope)?;
                self.expect_punct(',')?;
                let pred = self.parse_pred_operand(scope)?;
                self.expect_punct(',')?;
                let mask = self.parse_operand(scope, ScalarType::B32)?;
                Ok(Op::Vote {
                    mode,
                    dst,
                    pred,
                    mask,
                })
            }
            "mul24" => {
                let hi = if mods.take("hi") {
                    true
                } else if mods.take("lo") {
                    false
                } else {
                    return Err(self.error_at(opcode, "`mul24` needs `.lo` or `.hi`"));
                };
                let ty = self.take_type(mods, opcode)?;
                if !matches!(ty, ScalarType::U32 | ScalarType::S32) {
                    return Err(self.error_at(opcode, "`mul24` takes `.u32` or `.s32`"));
                }
                let dst = self.parse_destination(scope)?;
                let [a, b] = self.parse_sources(scope, [ty, ty])?;
                Ok(Op::Mul24 { hi, ty, dst, a, b })
            }
            "sad" => {
                let ty = self.take_type(mods, opcode)?;
                if !matches!(ty.kind(), TypeKind::Unsigned | TypeKind::Signed) || ty.bits() < 16 {
                    return Err(self.error_at(
                        opcode,
                        "`sad` takes a signed or unsigned integer type of 16, 32 or 64 bits",
                    ));
                }
                let dst = self.parse_destination(scope)?;
                let [a, b, c] = self.parse_sources(scope, [ty; 3])?;
                Ok(Op::Sad { ty, dst, a, b, c })
            }
            "testp" => {
                let class = self.take_from(
                    mods,
                    opcode,
                    "a class: `.finite`, `.infinite`, `.number`, `.notanumber`, `.normal` or `.subnormal`",
                    |m| FloatClass::ALL.into_iter().find(|class| class.name() == m),
                )?;
                let ty = self.take_type(mods, opcode)?;
                if !matches!(ty, ScalarType::F32 | ScalarType::F64) {
                    return Err(self.error_at(opcode, "`testp` takes `.f32` or `.f64`"));
                }
                let dst = self.parse_destination(scope)?;
                let [a] = self.parse_sources(scope, [ty])?;
                Ok(Op::Testp { class, ty, dst, a })
            }
            "copysign" => {
                let ty = self.take_type(mods, opcode)?;
                if !matches!(ty, ScalarType::F32 | ScalarType::F64) {
                    return Err(self.error_at(opcode, "`copysign` takes `.f32` or `.f64`"));
                }
                let dst = self.parse_destination(scope)?;
                let [a, b] = self.parse_sources(scope, [ty, ty])?;
                Ok(Op::CopySign { ty, dst, a, b })
            }
            "redux" => {
                if !mods.take("sync") {
                    return Err(self.error_at(opcode, "only `redux.sync` is supported"));
                }
                let op = self.take_from(
                    mods,
                    opcode,
                    "an operation: `.add`, `.min`, `.max`, `.and`, `.or` or `.xor`",
                    |m| ReduxOp::ALL.into_iter().find(|op| op.name() == m),
                )?;
                let ty = self.take_type(mods, opcode)?;
                let valid = if op.is_bitwise() {
                    ty == ScalarType::B32
                } else {
                    matches!(ty, ScalarType::U32 | ScalarType::S32)
                };
                if !valid {
                    let expected = if op.is_bitwise() {
                        "`.b32`"
                    } else {
                        "`.u32` or `.s32`"
                    };
                    return Err(self.error_at(
                        opcode,
                        format!("`redux.sync.{}` takes {expected}", op.name()),
                    ));
                }
                let dst = self.parse_destination(scope)?;
                let [a, mask] = self.parse_sources(scope, [ty, ScalarType::B32])?;
                Ok(Op::Redux {
                    op,
                    ty,
                    dst,
                    a,
                    mask,
                })
            }
            "match" => {
                let all = if mods.take("all") {
                    true
                } else if mods.take("any") {
                    false
                } else {
                    return Err(self.error_at(opcode, "`match` needs `.any` or `.all`"));
                };
                if !mods.take("sync") {
                    return Err(self.error_at(opcode, "only `match.sync` is supported"));
                }
                let ty = self.take_type(mods, opcode)?;
                if !matches!(ty, ScalarType::B32 | ScalarType::B64) {
                    return Err(self.error_at(opcode, "`match.sync` takes `.b32` or `.b64`"));
                }
                let dst = self.parse_destination(scope)?;
                let dst_pred = if self.eat_punct('|') {
                    if !all {
                        return Err(self.error_at(
                            opcode,
                            "only `match.all.sync` has a predicate destination",
                        ));
                    }
                    Some(self.parse_destination(scope)?)
                } else {
                    None
                };
                let [a, mask] = self.parse_sources(scope, [ty, ScalarType::B32])?;
                Ok(Op::Match {
                    all,
                    ty,
                    dst,
                    dst_pred,
                    a,
                    mask,
                })
            }
            "bra" => {
                mods.take("uni");
                let (name, token) = self.expect_word("a label")?;
                let target = self.label_id(scope, &name, &token);
                Ok(Op::Branch { target })
            }
            "exit" => Ok(Op::Exit),
            "ret" => {
                mods.take("uni");
                // In an inlined device function `ret` goes on after the
                // call: a branch to the end of the inlined body.
                if scope.inline_stack.is_empty() {
                    Ok(Op::Exit)
                } else {
                    Ok(Op::Branch {
                        target: self.return_label(scope, opcode),
                    })
                }
            }
            "bfe" => {
                let ty = self.take_type(mods, opcode)?;
                let dst = self.parse_destination(scope)?;
                let [a, position, length] =
                    self.parse_sources(scope, [ty, ScalarType::U32, ScalarType::U32])?;
                Ok(Op::BitFieldExtract {
                    ty,
                    dst,
                    a,
                    position,
                    length,
                })
            }
            "bfi" => {
                let ty = self.take_type(mods, opcode)?;
                let dst = self.parse_destination(scope)?;
                let [field, base, position, length] =
                    self.parse_sources(scope, [ty, ty, ScalarType::U32, ScalarType::U32])?;
                Ok(Op::BitFieldInsert {
                    ty,
                    dst,
                    field,
                    base,
                    position,
                    length,
                })
            }
            "prmt" => {
                let ty = self.take_type(mods, opcode)?;
                if ty != ScalarType::B32 {
                    return Err(self.error_at(opcode, "`prmt` takes `.b32`"));
                }
                let dst = self.parse_destination(scope)?;
                let [a, b, selector] = self.parse_sources(scope, [ty, ty, ty])?;
                Ok(Op::Permute {
                    dst,
                    a,
                    b,
                    selector,
                })
            }
            "shf" => {
                let left = if mods.take("l") {
                    true
                } else if mods.take("r") {
                    false
                } else {
                    return Err(self.error_at(opcode, "`shf` needs `.l` or `.r`"));
                };
                let clamp = if mods.take("clamp") {
                    true
                } else if mods.take("wrap") {
                    false
                } else {
                    return Err(self.error_at(opcode, "`shf` needs `.wrap` or `.clamp`"));
                };
                let ty = self.take_type(mods, opcode)?;
                if ty != ScalarType::B32 {
                    return Err(self.error_at(opcode, "`shf` takes `.b32`"));
                }
                let dst = self.parse_destination(scope)?;
                let [a, b, c] = self.parse_sources(scope, [ty, ty, ScalarType::U32])?;
                Ok(Op::FunnelShift {
                    left,
                    clamp,
                    dst,
                    a,
                    b,
                    c,
                })
            }
            "lop3" => {
                let ty = self.take_type(mods, opcode)?;
                if ty != ScalarType::B32 {
                    return Err(self.error_at(opcode, "`lop3` takes `.b32`"));
                }
                let dst = self.parse_destination(scope)?;
                let [a, b, c] = self.parse_sources(scope, [ty; 3])?;
                self.expect_punct(',')?;
                let (lut, token) = self.expect_integer("a truth table from 0 to 255")?;
                let lut = u8::try_from(lut).map_err(|_| {
                    self.error_at(&token, "a `lop3` truth table is 8 bits: 0 to 255")
                })?;
                Ok(Op::Lop3 { dst, a, b, c, lut })
            }
            "activemask" => {
                let ty = self.take_type(mods, opcode)?;
                if ty != ScalarType::B32 {
                    return Err(self.error_at(opcode, "`activemask` takes `.b32`"));
                }
                let dst = self.parse_destination(scope)?;
                Ok(Op::ActiveMask { dst })
            }
            "cvta" => {
                let to_generic = !mods.take("to");
                let space = self.take_from(
                    mods,
                    opcode,
                    "a state space such as `.shared`",
                    StateSpace::from_name,
                )?;
                let ty = self.take_type(mods, opcode)?;
                let dst = self.parse_destination(scope)?;
                let [src] = self.parse_sources(scope, [ty])?;
                Ok(Op::Cvta {
                    space,
                    to_generic,
                    ty,
                    dst,
                    src,
                })
            }
            // The `.kir` forms of the calls of `vprintf` and `__assertfail`
            // (PTX calls them as external functions; see `parse_call`).
            "vprintf" => {
                let ty = self.take_type(mods, opcode)?;
                if ty != ScalarType::B32 {
                    return Err(self.error_at(opcode, "`vprintf` takes `.b32`"));
                }
                let dst = if self.peek().kind == TokenKind::Word("_".to_string()) {
                    self.next();
                    None
                } else {
                    Some(self.parse_destination(scope)?)
                };
                let [format, arguments] =
                    self.parse_sources(scope, [ScalarType::U64, ScalarType::U64])?;
                Ok(Op::Printf {
                    dst,
                    format,
                    arguments,
                })
            }
            "assertfail" => {
                let message = self.parse_operand(scope, ScalarType::U64)?;
                let [file, line, function] =
                    self.parse_sources(scope, [ScalarType::U64, ScalarType::U32, ScalarType::U64])?;
                Ok(Op::AssertFail {
                    message,
                    file,
                    line,
                    function,
                })
            }
            "trap" => Ok(Op::Trap),
            "nanosleep" => {
                let ty = self.take_type(mods, opcode)?;
                if ty != ScalarType::U32 {
                    return Err(self.error_at(opcode, "`nanosleep` takes `.u32`"));
                }
                let duration = self.parse_operand(scope, ty)?;
                Ok(Op::NanoSleep { duration })
            }
            // Asynchronous copies and mbarriers: `parser` keeps their
            // grammar in one place below.
            "cp" => self.parse_cp_async(scope, mods, opcode),
            "mbarrier" => self.parse_mbarrier(scope, mods, opcode),
            _ => Err(self.error_at(opcode, format!("unknown instruction `{mnemonic}`"))),
        }
    }

    /// `cp.async...` (PTX ISA 9.7.9.25): the copy, `commit_group`,
    /// `wait_group`, `wait_all`, `mbarrier.arrive`, and the bulk copy into
    /// shared memory that completes on an mbarrier (9.7.9.25.4.1).
    fn parse_cp_async(
        &mut self,
        scope: &KernelScope,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        if !mods.take("async") {
            return Err(self.error_at(opcode, "the only `cp` instructions are `cp.async...`"));
        }
        if mods.take("commit_group") {
            return Ok(Op::CpAsyncCommitGroup);
        }
        if mods.take("wait_all") {
            return Ok(Op::CpAsyncWait { pending: None });
        }
        if mods.take("wait_group") {
            let token = self.peek().clone();
            let pending = match self.parse_operand(scope, ScalarType::U32)? {
                Operand::Imm { bits, .. } => u32::try_from(bits).ok(),
                _ => None,
            }
            .ok_or_else(|| {
                self.error_at(&token, "`cp.async.wait_group` takes a constant group count")
            })?;
            return Ok(Op::CpAsyncWait {
                pending: Some(pending),
            });
        }
        if mods.take("mbarrier") {
            if !mods.take("arrive") {
                return Err(self.error_at(opcode, "expected `cp.async.mbarrier.arrive`"));
            }
            let noinc = mods.take("noinc");
            mods.take_shared();
            if self.take_type(mods, opcode)? != ScalarType::B64 {
                return Err(self.error_at(opcode, "`cp.async.mbarrier.arrive` takes `.b64`"));
            }
            let addr = self.parse_address(scope)?;
            return Ok(Op::CpAsyncMbarrierArrive { noinc, addr });
        }
        if mods.take("bulk") {
            let spelled = ["shared::cluster", "global", "mbarrier::complete_tx::bytes"]
                .iter()
                .all(|name| mods.take(name));
            if !spelled {
                return Err(self.error_at(
                    opcode,
                    "warpsim knows the bulk copy `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` only",
                ));
            }
            let dst = self.parse_address(scope)?;
            self.expect_punct(',')?;
            let src = self.parse_address(scope)?;
            let [size] = self.parse_sources(scope, [ScalarType::U32])?;
            self.expect_punct(',')?;
            let mbarrier = self.parse_address(scope)?;
            return Ok(Op::CpAsyncBulk {
                dst,
                src,
                size,
                mbarrier,
            });
        }
        let bypass_l1 = if mods.take("cg") {
            true
        } else if mods.take("ca") {
            false
        } else {
            return Err(self.error_at(opcode, "`cp.async` needs `.ca` or `.cg`"));
        };
        if !mods.take_shared() || !mods.take("global") {
            return Err(self.error_at(opcode, "`cp.async` copies `.shared.global`"));
        }
        let cache_hint = mods.take("L2::cache_hint");
        let prefetch = [64, 128, 256]
            .into_iter()
            .find(|bytes| mods.take(&format!("L2::{bytes}B")));
        let dst = self.parse_address(scope)?;
        self.expect_punct(',')?;
        let src = self.parse_address(scope)?;
        let [size_operand] = self.parse_sources(scope, [ScalarType::U32])?;
        let size = match size_operand {
            Operand::Imm { bits, .. } => u32::try_from(bits).unwrap_or(u32::MAX),
            _ => {
                let token = self.tokens[self.position - 1].clone();
                return Err(self.error_at(&token, "the `cp.async` size is a constant: 4, 8 or 16"));
            }
        };
        // After the size: a source size (a number) or the ignore-src
        // predicate, then the cache policy when `.L2::cache_hint` asks for one.
        let mut src_size = None;
        let mut ignore_src = None;
        let mut cache_policy = None;
        if self.eat_punct(',') {
            if self.is_pred_operand_next(scope) {
                ignore_src = Some(self.parse_pred_operand(scope)?);
            } else {
                let operand = self.parse_operand(scope, ScalarType::U32)?;
                if cache_hint
                    && !self.is_punct(',')
                    && matches!(operand, Operand::Reg(reg) if scope.kernel.reg(reg).ty.bits() == 64)
                {
                    cache_policy = Some(operand);
                } else {
                    src_size = Some(operand);
                }
            }
        }
        if cache_hint && cache_policy.is_none() {
            let [policy] = self.parse_sources(scope, [ScalarType::B64])?;
            cache_policy = Some(policy);
        }
        Ok(Op::CpAsync {
            bypass_l1,
            size,
            dst,
            src,
            src_size,
            ignore_src,
            cache_policy,
            prefetch,
        })
    }

    /// `mbarrier.op...` (PTX ISA 9.7.13.15). Memory-ordering qualifiers
    /// (`.release`, `.acquire`, `.relaxed`, `.cta`, `.cluster`) are
    /// accepted: a block's threads see every mbarrier operation in order.
    fn parse_mbarrier(
        &mut self,
        scope: &KernelScope,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        let Some(name) = mods.list.first().cloned() else {
            return Err(self.error_at(opcode, "`mbarrier` needs an operation"));
        };
        mods.take(&name);
        for qualifier in ["release", "acquire", "relaxed", "cta", "cluster"] {
            mods.take(qualifier);
        }
        let expect_tx = mods.take("expect_tx");
        let parity = mods.take("parity");
        let space = if mods.take_shared() {
            StateSpace::Shared
        } else {
            StateSpace::Generic
        };
        if self.take_type(mods, opcode)? != ScalarType::B64 {
            return Err(self.error_at(opcode, "`mbarrier` instructions take `.b64`"));
        }
        let sink = |parser: &mut Self| -> Result<Option<RegId>> {
            if parser.peek().kind == TokenKind::Word("_".to_string()) {
                parser.next();
                Ok(None)
            } else {
                Ok(Some(parser.parse_destination(scope)?))
            }
        };
        let op = match name.as_str() {
            "pending_count" => {
                let dst = self.parse_destination(scope)?;
                let [state] = self.parse_sources(scope, [ScalarType::B64])?;
                return Ok(Op::MbarrierPendingCount { dst, state });
            }
            "init" | "expect_tx" | "complete_tx" | "inval" => {
                let addr = self.parse_address(scope)?;
                let op = match name.as_str() {
                    "init" => MbarrierOp::Init {
                        count: self.parse_sources(scope, [ScalarType::U32])?[0],
                    },
                    "expect_tx" => MbarrierOp::ExpectTx {
                        bytes: self.parse_sources(scope, [ScalarType::U32])?[0],
                    },
                    "complete_tx" => MbarrierOp::CompleteTx {
                        bytes: self.parse_sources(scope, [ScalarType::U32])?[0],
                    },
                    _ => MbarrierOp::Invalidate,
                };
                return Ok(Op::Mbarrier { op, space, addr });
            }
            "arrive" | "arrive_drop" => {
                let state = sink(self)?;
                self.expect_punct(',')?;
                let addr = self.parse_address(scope)?;
                let extra = if self.eat_punct(',') {
                    Some(self.parse_operand(scope, ScalarType::U32)?)
                } else {
                    None
                };
                let (count, expect_tx) = if expect_tx {
                    (None, extra)
                } else {
                    (extra, None)
                };
                if expect_tx.is_some() != mods.was_taken("expect_tx") {
                    return Err(self.error_at(opcode, "`arrive.expect_tx` takes a byte count"));
                }
                (
                    MbarrierOp::Arrive {
                        drop: name == "arrive_drop",
                        state,
                        count,
                        expect_tx,
                    },
                    addr,
                )
            }
            "test_wait" | "try_wait" => {
                let done = self.parse_destination(scope)?;
                self.expect_punct(',')?;
                let addr = self.parse_address(scope)?;
                let phase_ty = if parity {
                    ScalarType::U32
                } else {
                    ScalarType::B64
                };
                let [phase] = self.parse_sources(scope, [phase_ty])?;
                let suspend_hint = if name == "try_wait" && self.eat_punct(',') {
                    Some(self.parse_operand(scope, ScalarType::U32)?)
                } else {
                    None
                };
                (
                    MbarrierOp::Wait {
                        try_wait: name == "try_wait",
                        parity,
                        done,
                        phase,
                        suspend_hint,
                    },
                    addr,
                )
            }
            other => {
                return Err(self.error_at(opcode, format!("unknown `mbarrier` operation `{other}`")))
            }
        };
        let (op, addr) = op;
        Ok(Op::Mbarrier { op, space, addr })
    }

    /// `mov.ty d, a`, and the vector forms that pack or unpack two or four
    /// elements in braces: `mov.b64 %rd1, {%r1, %r2}`, `mov.b64 {%r1, _}, %rd1`.
    /// `cvt.rn.bf16x2.f32 d, a, b` (or `.f16x2`): the rest of a `cvt` whose
    /// destination is a pair, after its types. PTX defines it for two `.f32`
    /// sources only, with a rounding and without `.sat`.
    fn parse_cvt_pair(
        &mut self,
        scope: &KernelScope,
        dst_ty: ScalarType,
        src_ty: ScalarType,
        rounding: Option<Rounding>,
        saturate: bool,
        opcode: &Token,
    ) -> Result<Op> {
        if src_ty != ScalarType::F32 {
            return Err(self.error_at(
                opcode,
                format!("`cvt` to `.{dst_ty}` converts two `.f32` values, not `.{src_ty}`"),
            ));
        }
        if saturate {
            return Err(self.error_at(opcode, format!("`cvt` to `.{dst_ty}` has no `.sat` form")));
        }
        let Some(rounding) = rounding else {
            return Err(self.error_at(
                opcode,
                format!("`cvt` to `.{dst_ty}` needs a rounding such as `.rn`"),
            ));
        };
        let dst = self.parse_destination(scope)?;
        let [a, b] = self.parse_sources(scope, [src_ty, src_ty])?;
        Ok(Op::CvtPair {
            dst_ty,
            rounding,
            dst,
            a,
            b,
        })
    }

    fn parse_mov(&mut self, scope: &KernelScope, ty: ScalarType, opcode: &Token) -> Result<Op> {
        let element = |parser: &Self, count: usize| {
            Op::vector_element_type(ty, count).ok_or_else(|| {
                parser.error_at(
                    opcode,
                    format!("`mov.{ty}` cannot be split into {count} elements"),
                )
            })
        };
        if self.eat_punct('{') {
            let mut dst = Vec::new();
            loop {
                let token = self.peek().clone();
                if token.kind == TokenKind::Word("_".to_string()) {
                    self.next();
                    dst.push(None);
                } else {
                    dst.push(Some(self.parse_destination(scope)?));
                }
                if !self.eat_punct(',') {
                    break;
                }
            }
            self.expect_punct('}')?;
            element(self, dst.len())?;
            let [src] = self.parse_sources(scope, [ty])?;
            return Ok(Op::Unpack { ty, dst, src });
        }
        let dst = self.parse_destination(scope)?;
        self.expect_punct(',')?;
        if !self.eat_punct('{') {
            let a = self.parse_operand(scope, ty)?;
            return Ok(Op::Unary {
                op: UnaryOp::Mov,
                ty,
                dst,
                a,
            });
        }
        // Count the elements first: each is read as the element type.
        let mut count = 1;
        let mut ahead = 0;
        loop {
            match self.peek_at(ahead).kind {
                TokenKind::Punct('}' | ';') | TokenKind::End => break,
                TokenKind::Punct(',') => count += 1,
                _ => {}
            }
            ahead += 1;
        }
        let element_ty = element(self, count)?;
        let mut src = Vec::with_capacity(count);
        for index in 0..count {
            if index > 0 {
                self.expect_punct(',')?;
            }
            src.push(self.parse_operand(scope, element_ty)?);
        }
        self.expect_punct('}')?;
        Ok(Op::Pack { ty, dst, src })
    }

    /// `ld.param`/`st.param` on a call sequence's `.param` variable, or on a
    /// device function's parameter, which the parser turned into `.local`
    /// storage: the access is to `.local` (PTX only).
    fn call_parameter_space(
        &self,
        scope: &KernelScope,
        space: StateSpace,
        addr: &Address,
    ) -> StateSpace {
        match addr.base {
            AddressBase::Symbol(symbol)
                if self.dialect == Dialect::Ptx
                    && space == StateSpace::Param
                    && scope.kernel.symbol(symbol).space == StateSpace::Local =>
            {
                StateSpace::Local
            }
            _ => space,
        }
    }

    /// Takes the one remaining type modifier.
    fn take_type(&self, mods: &mut Modifiers, opcode: &Token) -> Result<ScalarType> {
        self.take_from(mods, opcode, "a type such as `.u32`", ScalarType::from_name)
    }

    fn take_from<T>(
        &self,
        mods: &mut Modifiers,
        opcode: &Token,
        what: &str,
        find: impl Fn(&str) -> Option<T>,
    ) -> Result<T> {
        mods.take_map(find)
            .ok_or_else(|| self.error_at(opcode, format!("missing {what}")))
    }

    fn take_scope(&self, mods: &mut Modifiers) -> Option<Scope> {
        mods.take_map(|m| match m {
            "cta" => Some(Scope::Cta),
            "cluster" => Some(Scope::Cluster),
            "gpu" => Some(Scope::Gpu),
            "sys" => Some(Scope::Sys),
            _ => None,
        })
    }

    fn take_memory_order(&self, mods: &mut Modifiers, opcode: &Token) -> Result<MemoryOrder> {
        if mods.take("volatile") {
            return Ok(MemoryOrder::Volatile);
        }
        let constructor: Option<fn(Scope) -> MemoryOrder> = if mods.take("relaxed") {
            Some(MemoryOrder::Relaxed)
        } else if mods.take("acquire") {
            Some(MemoryOrder::Acquire)
        } else if mods.take("release") {
            Some(MemoryOrder::Release)
        } else {
            None
        };
        match constructor {
            None => Ok(MemoryOrder::Weak),
            Some(make) => {
                let scope = self.take_scope(mods).ok_or_else(|| {
                    self.error_at(
                        opcode,
                        "a strong access needs a scope: `.cta`, `.gpu` or `.sys`",
                    )
                })?;
                Ok(make(scope))
            }
        }
    }

    fn parse_register(&mut self, scope: &KernelScope) -> Result<(RegId, Token)> {
        let token = self.next();
        match &token.kind {
            TokenKind::Register(name) => match scope.regs.get(name) {
                Some(&reg) => Ok((reg, token)),
                None => Err(self.error_at(&token, format!("register `{name}` is not declared"))),
            },
            // A register declared without `%` (`temp_param_reg`).
            TokenKind::Word(name) if scope.regs.contains_key(name) => Ok((scope.regs[name], token)),
            _ => Err(self.unexpected(&token, "a register")),
        }
    }

    fn parse_destination(&mut self, scope: &KernelScope) -> Result<RegId> {
        let token = self.peek().clone();
        if let TokenKind::Register(name) = &token.kind {
            if SpecialReg::from_name(name).is_some() {
                return Err(
                    self.error_at(&token, format!("special register `{name}` is read-only"))
                );
            }
        }
        Ok(self.parse_register(scope)?.0)
    }

    /// `ldmatrix.sync.aligned.m8n8.xN[.trans][.shared].b16 {d..}, [addr]` and
    /// `stmatrix.sync.aligned.m8n8.xN[.trans][.shared].b16 [addr], {s..}`
    /// (PTX ISA 9.7.14.5.15 and 9.7.14.5.16).
    fn parse_matrix_access(
        &mut self,
        scope: &KernelScope,
        mnemonic: &str,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        if !(mods.take("sync") && mods.take("aligned") && mods.take("m8n8")) {
            return Err(self.error_at(
                opcode,
                format!("`{mnemonic}` is spelled `{mnemonic}.sync.aligned.m8n8.xN`"),
            ));
        }
        let matrices = if mods.take("x1") {
            1
        } else if mods.take("x2") {
            2
        } else if mods.take("x4") {
            4
        } else {
            return Err(self.error_at(
                opcode,
                format!("`{mnemonic}` needs a matrix count: `.x1`, `.x2` or `.x4`"),
            ));
        };
        let transpose = mods.take("trans");
        let space = match mods.take_map(StateSpace::from_name) {
            None => StateSpace::Generic,
            Some(StateSpace::Shared) => StateSpace::Shared,
            Some(other) => {
                return Err(self.error_at(
                    opcode,
                    format!(
                        "`{mnemonic}` accesses shared memory, not `.{}`",
                        other.name()
                    ),
                ))
            }
        };
        if self.take_type(mods, opcode)? != ScalarType::B16 {
            return Err(self.error_at(opcode, format!("`{mnemonic}` takes `.b16`")));
        }
        if mnemonic == "ldmatrix" {
            let dst = self.parse_register_list(scope)?;
            self.expect_punct(',')?;
            let addr = self.parse_address(scope)?;
            self.expect_fragment_count(opcode, "destination", dst.len(), matrices)?;
            Ok(Op::MatrixLoad {
                space,
                transpose,
                dst,
                addr,
            })
        } else {
            let addr = self.parse_address(scope)?;
            self.expect_punct(',')?;
            let src = self.parse_register_list(scope)?;
            self.expect_fragment_count(opcode, "source", src.len(), matrices)?;
            Ok(Op::MatrixStore {
                space,
                transpose,
                addr,
                src,
            })
        }
    }

    /// `mma.sync.aligned.shape.row.col[.satfinite].dtype.atype.btype.ctype
    /// d, a, b, c` (PTX ISA 9.7.14.5.14), with each fragment a brace list.
    fn parse_mma(
        &mut self,
        scope: &KernelScope,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        if !(mods.take("sync") && mods.take("aligned")) {
            return Err(self.error_at(opcode, "`mma` is spelled `mma.sync.aligned`"));
        }
        let shape = self.take_from(mods, opcode, "a shape such as `.m16n8k16`", |m| {
            MmaShape::ALL.into_iter().find(|shape| shape.name() == m)
        })?;
        // The operand types come in the order d, a, b, c; the layouts must be
        // `.row.col`, the only ones these shapes have on sm_80 and later.
        let mut types = Vec::new();
        let mut layouts = Vec::new();
        let mut satfinite = false;
        for (index, modifier) in mods.list.iter().enumerate() {
            if mods.used[index] {
                continue;
            }
            if let Some(ty) = MmaType::ALL.into_iter().find(|ty| ty.name() == modifier) {
                types.push(ty);
            } else if modifier == "row" || modifier == "col" {
                layouts.push(modifier.clone());
            } else if modifier == "satfinite" {
                satfinite = true;
            } else {
                continue;
            }
            mods.used[index] = true;
        }
        if layouts != ["row", "col"] {
            return Err(self.error_at(
                opcode,
                format!("`mma.sync.aligned.{}` takes `.row.col`", shape.name()),
            ));
        }
        let [d_type, a_type, b_type, c_type] = types[..] else {
            return Err(self.error_at(
                opcode,
                "`mma` names four types: of D, A, B and C, as in `.f32.f16.f16.f32`",
            ));
        };
        let Some(fragments) = mma_fragments(shape, d_type, a_type, b_type, c_type) else {
            return Err(self.error_at(
                opcode,
                format!(
                    "`mma.{}` does not take D `.{}`, A `.{}`, B `.{}`, C `.{}`",
                    shape.name(),
                    d_type.name(),
                    a_type.name(),
                    b_type.name(),
                    c_type.name()
                ),
            ));
        };
        if satfinite && c_type != MmaType::S32 {
            return Err(self.error_at(opcode, "`.satfinite` is for integer `mma` only"));
        }
        let d = self.parse_register_list(scope)?;
        self.expect_punct(',')?;
        let a = self.parse_register_list(scope)?;
        self.expect_punct(',')?;
        let b = self.parse_register_list(scope)?;
        self.expect_punct(',')?;
        let c = self.parse_register_list(scope)?;
        for (role, count, expected) in [
            ("D", d.len(), fragments.d),
            ("A", a.len(), fragments.a),
            ("B", b.len(), fragments.b),
            ("C", c.len(), fragments.c),
        ] {
            if count != expected {
                return Err(self.error_at(
                    opcode,
                    format!(
                        "this `mma` takes {expected} register{} for {role}, not {count}",
                        if expected == 1 { "" } else { "s" }
                    ),
                ));
            }
        }
        Ok(Op::MatrixMultiplyAccumulate {
            shape,
            satfinite,
            d_type,
            a_type,
            b_type,
            c_type,
            d,
            a,
            b,
            c,
        })
    }

    /// `wmma.load`, `wmma.store` and `wmma.mma` of the m16n16k16 shape
    /// (PTX ISA 9.7.14.4).
    fn parse_wmma(
        &mut self,
        scope: &KernelScope,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        let operation = if mods.take("load") {
            "load"
        } else if mods.take("store") {
            "store"
        } else if mods.take("mma") {
            "mma"
        } else {
            return Err(self.error_at(opcode, "expected `wmma.load`, `wmma.store` or `wmma.mma`"));
        };
        if !(mods.take("sync") && mods.take("aligned") && mods.take("m16n16k16")) {
            return Err(self.error_at(
                opcode,
                format!("`wmma.{operation}` is spelled `wmma.{operation}...sync.aligned...m16n16k16`; only the m16n16k16 shape is supported"),
            ));
        }
        let layout = |m: &str| match m {
            "row" => Some(WmmaLayout::Row),
            "col" => Some(WmmaLayout::Column),
            _ => None,
        };
        let mma_type = |m: &str| MmaType::ALL.into_iter().find(|ty| ty.name() == m);
        if operation == "mma" {
            let a_layout =
                self.take_from(mods, opcode, "the layout of A, `.row` or `.col`", layout)?;
            let b_layout =
                self.take_from(mods, opcode, "the layout of B, `.row` or `.col`", layout)?;
            let mut types = Vec::new();
            while let Some(ty) = mods.take_map(mma_type) {
                types.push(ty);
            }
            let (input_type, d_type, c_type) = match types[..] {
                [d, c] if matches!(d, MmaType::F16 | MmaType::F32)
                    && matches!(c, MmaType::F16 | MmaType::F32) =>
                {
                    (MmaType::F16, d, c)
                }
                [MmaType::F32, MmaType::Bf16, MmaType::Bf16, MmaType::F32] => {
                    (MmaType::Bf16, MmaType::F32, MmaType::F32)
                }
                _ => {
                    return Err(self.error_at(
                        opcode,
                        "`wmma.mma` names D and C (`.f32.f32`, `.f16.f32`, ...) for `.f16` inputs, or `.f32.bf16.bf16.f32`",
                    ))
                }
            };
            let d = self.parse_register_list(scope)?;
            self.expect_punct(',')?;
            let a = self.parse_register_list(scope)?;
            self.expect_punct(',')?;
            let b = self.parse_register_list(scope)?;
            self.expect_punct(',')?;
            let c = self.parse_register_list(scope)?;
            for (role, regs, matrix, ty) in [
                ("D", &d, WmmaMatrix::C, d_type),
                ("A", &a, WmmaMatrix::A, input_type),
                ("B", &b, WmmaMatrix::B, input_type),
                ("C", &c, WmmaMatrix::C, c_type),
            ] {
                self.expect_wmma_count(opcode, role, regs.len(), matrix, ty)?;
            }
            return Ok(Op::WmmaMma {
                a_layout,
                b_layout,
                input_type,
                d_type,
                c_type,
                d,
                a,
                b,
                c,
            });
        }
        let matrix = if operation == "store" {
            if !mods.take("d") {
                return Err(self.error_at(opcode, "`wmma.store` stores `.d`"));
            }
            WmmaMatrix::C
        } else if mods.take("a") {
            WmmaMatrix::A
        } else if mods.take("b") {
            WmmaMatrix::B
        } else if mods.take("c") {
            WmmaMatrix::C
        } else {
            return Err(self.error_at(opcode, "`wmma.load` loads `.a`, `.b` or `.c`"));
        };
        let layout = self.take_from(mods, opcode, "a layout, `.row` or `.col`", layout)?;
        let space = mods
            .take_map(StateSpace::from_name)
            .unwrap_or(StateSpace::Generic);
        let ty = self.take_from(mods, opcode, "an element type such as `.f16`", mma_type)?;
        let stride = |parser: &mut Self| -> Result<Option<Operand>> {
            if parser.eat_punct(',') {
                Ok(Some(parser.parse_operand(scope, ScalarType::U32)?))
            } else {
                Ok(None)
            }
        };
        let role = if operation == "store" {
            "source"
        } else {
            "destination"
        };
        if operation == "store" {
            let addr = self.parse_address(scope)?;
            self.expect_punct(',')?;
            let src = self.parse_register_list(scope)?;
            let stride = stride(self)?;
            self.expect_wmma_count(opcode, role, src.len(), matrix, ty)?;
            Ok(Op::WmmaStore {
                layout,
                space,
                ty,
                addr,
                src,
                stride,
            })
        } else {
            let dst = self.parse_register_list(scope)?;
            self.expect_punct(',')?;
            let addr = self.parse_address(scope)?;
            let stride = stride(self)?;
            self.expect_wmma_count(opcode, role, dst.len(), matrix, ty)?;
            Ok(Op::WmmaLoad {
                matrix,
                layout,
                space,
                ty,
                dst,
                addr,
                stride,
            })
        }
    }

    /// A WMMA fragment has the register count of its matrix and type.
    fn expect_wmma_count(
        &self,
        opcode: &Token,
        role: &str,
        count: usize,
        matrix: WmmaMatrix,
        ty: MmaType,
    ) -> Result<()> {
        match wmma_fragment_registers(matrix, ty) {
            Some(expected) if expected == count => Ok(()),
            Some(expected) => Err(self.error_at(
                opcode,
                format!(
                    "a `.{}` WMMA fragment of `.{}` takes {expected} {role} registers, not {count}",
                    matrix.name(),
                    ty.name()
                ),
            )),
            None => Err(self.error_at(
                opcode,
                format!(
                    "a `.{}` WMMA fragment cannot hold `.{}`",
                    matrix.name(),
                    ty.name()
                ),
            )),
        }
    }

    /// A brace list of registers of any length, `{%r1, %r2}`.
    fn parse_register_list(&mut self, scope: &KernelScope) -> Result<Vec<RegId>> {
        self.expect_punct('{')?;
        let mut regs = vec![self.parse_destination(scope)?];
        while self.eat_punct(',') {
            regs.push(self.parse_destination(scope)?);
        }
        self.expect_punct('}')?;
        Ok(regs)
    }

    /// An `ldmatrix`/`stmatrix` fragment holds one register per matrix.
    fn expect_fragment_count(
        &self,
        opcode: &Token,
        role: &str,
        count: usize,
        matrices: usize,
    ) -> Result<()> {
        if count == matrices {
            return Ok(());
        }
        Err(self.error_at(
            opcode,
            format!(
                "`.x{matrices}` moves {matrices} matri{} and takes {matrices} {role} register{}, not {count}",
                if matrices == 1 { "x" } else { "ces" },
                if matrices == 1 { "" } else { "s" }
            ),
        ))
    }

    fn parse_register_vector(&mut self, scope: &KernelScope, count: usize) -> Result<Vec<RegId>> {
        self.expect_punct('{')?;
        let mut regs = Vec::with_capacity(count);
        for index in 0..count {
            if index > 0 {
                self.expect_punct(',')?;
            }
            regs.push(self.parse_destination(scope)?);
        }
        self.expect_punct('}')?;
        Ok(regs)
    }

    /// `, a, b, ...` after a destination: one operand per type, each read as
    /// that type.
    fn parse_sources<const N: usize>(
        &mut self,
        scope: &KernelScope,
        types: [ScalarType; N],
    ) -> Result<[Operand; N]> {
        let mut operands = [Operand::Imm {
            bits: 0,
            ty: ScalarType::B32,
        }; N];
        for (operand, ty) in operands.iter_mut().zip(types) {
            self.expect_punct(',')?;
            *operand = self.parse_operand(scope, ty)?;
        }
        Ok(operands)
    }

    fn is_pred_operand_next(&self, scope: &KernelScope) -> bool {
        match &self.peek().kind {
            TokenKind::Punct('!') => true,
            TokenKind::Register(name) => scope
                .regs
                .get(name)
                .is_some_and(|&reg| scope.kernel.reg(reg).ty == ScalarType::Pred),
            _ => false,
        }
    }

    fn parse_pred_operand(&mut self, scope: &KernelScope) -> Result<PredOperand> {
        let negated = self.eat_punct('!');
        let value = self.parse_operand(scope, ScalarType::Pred)?;
        Ok(PredOperand { value, negated })
    }

    /// An operand read as type `ty`: a register, a special register, a literal
    /// (converted to `ty` here) or a variable's address.
    fn parse_operand(&mut self, scope: &KernelScope, ty: ScalarType) -> Result<Operand> {
        let token = self.peek().clone();
        match &token.kind {
            TokenKind::Register(name) => {
                if let Some(special) = SpecialReg::from_name(name) {
                    self.next();
                    return Ok(Operand::Special(special));
                }
                Ok(Operand::Reg(self.parse_register(scope)?.0))
            }
            // A register named without `%` (PTX's `temp_param_reg`).
            TokenKind::Word(name)
                if !scope.symbols.contains_key(name) && scope.regs.contains_key(name) =>
            {
                Ok(Operand::Reg(self.parse_register(scope)?.0))
            }
            // `WARP_SZ` is PTX's predefined constant for the warp size
            // (what `warpSize` compiles to): the literal 32.
            TokenKind::Word(name)
                if name == WARP_SIZE_CONSTANT && !scope.symbols.contains_key(name) =>
            {
                self.next();
                Ok(Operand::Imm { bits: 32, ty })
            }
            TokenKind::Word(name) => {
                let symbol = self.visible_symbol(scope, &token, name)?;
                self.next();
                Ok(Operand::Symbol(symbol))
            }
            TokenKind::Punct('-')
            | TokenKind::Integer(_)
            | TokenKind::Float(_)
            | TokenKind::FloatBits { .. } => {
                let bits = self.parse_literal(ty)?;
                Ok(Operand::Imm { bits, ty })
            }
            _ => Err(self.unexpected(&token, "an operand")),
        }
    }

    /// The variable visible here as `name`, which `token` spells.
    fn visible_symbol(&self, scope: &KernelScope, token: &Token, name: &str) -> Result<SymbolId> {
        scope
            .symbols
            .get(name)
            .copied()
            .ok_or_else(|| self.error_at(token, format!("`{name}` is not a declared variable")))
    }

    /// A literal converted to the bits of `ty`.
    fn parse_literal(&mut self, ty: ScalarType) -> Result<u64> {
        let negative = self.eat_punct('-');
        let token = self.next();
        let out_of_range =
            |parser: &Self| parser.error_at(&token, format!("literal does not fit in `.{ty}`"));
        match ty.kind() {
            // `mov.pred %p, 0` (PTX): a predicate literal is 0 or 1.
            TypeKind::Predicate => match token.kind {
                TokenKind::Integer(value @ (0 | 1)) if !negative => Ok(value),
                _ => Err(self.error_at(
                    &token,
                    "a predicate operand must be a register, or the literal 0 or 1",
                )),
            },
            // PTX has no `.f16` literals: halves are moved as bits
            // (`mov.b16 %rs1, 0x3C00`), and reading a decimal as a half
            // would need a rounding of its own.
            TypeKind::Float if ty.is_half() => Err(self.error_at(
                &token,
                format!(
                    "a `.{ty}` operand cannot be a literal: move its bits with `mov.b{}`",
                    ty.bits()
                ),
            )),
            TypeKind::Float => {
                let text = match &token.kind {
                    TokenKind::Float(text) => text.clone(),
                    TokenKind::Integer(value) => value.to_string(),
                    &TokenKind::FloatBits { bits, double } => {
                        if double != (ty == ScalarType::F64) {
                            return Err(self.error_at(
                                &token,
                                format!("use `0f` literals for `.f32` and `0d` literals for `.f64`, not for `.{ty}`"),
                            ));
                        }
                        let sign = if negative {
                            if double {
                                1 << 63
                            } else {
                                1 << 31
                            }
                        } else {
                            0
                        };
                        return Ok(bits ^ sign);
                    }
                    _ => return Err(self.unexpected(&token, "a number")),
                };
                // Parse in the target precision so the literal is rounded once.
                let bits = if ty == ScalarType::F32 {
                    let value: f32 = text.parse().map_err(|_| out_of_range(self))?;
                    u64::from((if negative { -value } else { value }).to_bits())
                } else {
                    let value: f64 = text.parse().map_err(|_| out_of_range(self))?;
                    (if negative { -value } else { value }).to_bits()
                };
                Ok(bits)
            }
            _ => {
                let TokenKind::Integer(magnitude) = token.kind else {
                    return Err(self.unexpected(&token, "an integer literal"));
                };
                let bits = ty.bits();
                let mask = if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                if negative {
                    // Accept down to the most negative value of the signed type of this width.
                    let limit = 1u64 << (bits - 1);
                    if magnitude > limit {
                        return Err(out_of_range(self));
                    }
                    Ok(magnitude.wrapping_neg() & mask)
                } else {
                    if magnitude > mask {
                        return Err(out_of_range(self));
                    }
                    Ok(magnitude)
                }
            }
        }
    }

    /// `[%r]`, `[%r+16]`, `[tile+4]`, `[tile]`, `[64]`.
    fn parse_address(&mut self, scope: &KernelScope) -> Result<Address> {
        self.expect_punct('[')?;
        let token = self.peek().clone();
        let base = match &token.kind {
            TokenKind::Register(_) => AddressBase::Reg(self.parse_register(scope)?.0),
            TokenKind::Word(name) => {
                let symbol = self.visible_symbol(scope, &token, name)?;
                self.next();
                AddressBase::Symbol(symbol)
            }
            TokenKind::Integer(_) => AddressBase::Absolute,
            _ => {
                return Err(
                    self.unexpected(&token, "an address: a register, a variable or a number")
                )
            }
        };
        let mut offset = 0i64;
        if base == AddressBase::Absolute {
            let (value, token) = self.expect_integer("an address")?;
            offset =
                i64::try_from(value).map_err(|_| self.error_at(&token, "address too large"))?;
        } else if self.is_punct('+') || self.is_punct('-') {
            let negative = self.next().kind == TokenKind::Punct('-');
            let negative = negative ^ self.eat_punct('-');
            let (value, token) = self.expect_integer("an offset")?;
            let value =
                i64::try_from(value).map_err(|_| self.error_at(&token, "offset too large"))?;
            offset = if negative { -value } else { value };
        }
        self.expect_punct(']')?;
        Ok(Address { base, offset })
    }
}

/// The modifiers of one opcode, each to be consumed exactly once.
struct Modifiers {
    list: Vec<String>,
    used: Vec<bool>,
}

impl Modifiers {
    fn take(&mut self, name: &str) -> bool {
        self.take_map(|m| (m == name).then_some(())).is_some()
    }

    /// Takes a modifier naming the block's shared memory, in any of its
    /// spellings (`StateSpace::from_name`: `.shared`, `.shared::cta`).
    fn take_shared(&mut self) -> bool {
        self.take_map(|m| (StateSpace::from_name(m) == Some(StateSpace::Shared)).then_some(()))
            .is_some()
    }

    /// Whether `name` is among the modifiers not taken yet (taking nothing).
    fn has(&self, name: &str) -> bool {
        self.list
            .iter()
            .zip(&self.used)
            .any(|(m, &used)| !used && m == name)
    }

    fn was_taken(&self, name: &str) -> bool {
        self.list
            .iter()
            .zip(&self.used)
            .any(|(m, &used)| used && m == name)
    }

    fn take_map<T>(&mut self, find: impl Fn(&str) -> Option<T>) -> Option<T> {
        for (index, modifier) in self.list.iter().enumerate() {
            if self.used[index] {
                continue;
            }
            if let Some(found) = find(modifier) {
                self.used[index] = true;
                return Some(found);
            }
        }
        None
    }

    fn take_bool_op(&mut self) -> Option<BoolOp> {
        self.take_map(|m| match m {
            "and" => Some(BoolOp::And),
            "or" => Some(BoolOp::Or),
            "xor" => Some(BoolOp::Xor),
            _ => None,
        })
    }

    /// Float rounding and flush modifiers on arithmetic: round-to-nearest is
    /// what the machine does, so `.rn`, `.ftz`, `.full` and `.approx` are accepted
    /// and the IR keeps no trace of them.
    fn take_float_modes(&mut self) {
        for mode in ["rn", "ftz", "full", "approx"] {
            self.take(mode);
        }
    }

    fn first_unused(&self) -> Option<&str> {
        self.list
            .iter()
            .zip(&self.used)
            .find(|(_, &used)| !used)
            .map(|(m, _)| m.as_str())
    }
}

/// The type twice as wide, for `mul.wide` and `mad.wide`.
pub fn widen(ty: ScalarType) -> Option<ScalarType> {
    Some(match ty {
        ScalarType::U16 => ScalarType::U32,
        ScalarType::U32 => ScalarType::U64,
        ScalarType::S16 => ScalarType::S32,
        ScalarType::S32 => ScalarType::S64,
        ScalarType::B16 => ScalarType::B32,
        ScalarType::B32 => ScalarType::B64,
        _ => return None,
    })
}
