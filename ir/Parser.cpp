//===- Parser.cpp - Reading the graph IR's text form ----------------------===//
//
// A recursive-descent parser over the grammar in docs/graph-ir.md. It stops
// at the first error. Value names may be used before the line that defines
// them (the verifier reports that with a better message than "undefined"):
// a use of an unknown name creates a placeholder node, which becomes the
// definition when it appears; placeholders left at the end of a graph are
// undefined values.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "ir/BigIntGuard.h"

#include "ir/Lexer.h"
#include "ir/Syntax.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace dync::ir {

namespace {

/// Deeper input is rejected rather than risk the stack: of brackets,
/// parentheses, nested types and unary minus in the parser, and of the
/// symbolic integers it builds (which the printer and evaluator recurse on).
constexpr unsigned maxNesting = 256;
constexpr unsigned maxSymDepth = 1024;

class Parser {
public:
  Parser(llvm::SourceMgr& sm, unsigned bufferId, Context& ctx)
      : sm_(sm), ctx_(ctx), lexer_(sm.getMemoryBuffer(bufferId)->getBuffer()),
        bufferEnd_(sm.getMemoryBuffer(bufferId)->getBufferEnd()) {
    consume();
  }

  llvm::Expected<std::unique_ptr<Module>> parseModule();
  llvm::Expected<SymExpr> parseWholeSymExpr();
  llvm::Expected<Type> parseWholeType();

private:
  // Diagnostics. Only the first error is kept: what follows it is noise.
  std::nullopt_t error(llvm::SMLoc loc, const llvm::Twine& message);
  void note(llvm::SMLoc loc, const llvm::Twine& message);
  /// "expected X": reports a lexer error instead if the current token is one.
  std::nullopt_t expected(const llvm::Twine& what);
  llvm::Error takeError();

  // Tokens.
  void consume() { tok_ = lexer_.lex(); }
  Token peek() const {
    Lexer ahead = lexer_;
    return ahead.lex();
  }
  bool consumeIf(Token::Kind kind) {
    if (!tok_.is(kind))
      return false;
    consume();
    return true;
  }
  bool consumeKeywordIf(llvm::StringRef word) {
    if (!tok_.isKeyword(word))
      return false;
    consume();
    return true;
  }
  bool expect(Token::Kind kind, llvm::StringRef spelling) {
    if (consumeIf(kind))
      return true;
    expected("'" + spelling + "'");
    return false;
  }
  /// `>` ending a type; splits `>=` (as in `int<s0>= L['n']`) into `>` `=`.
  bool expectClosingAngle();

  // Grammar.
  bool parseGraph(Module& module, GraphKind kind);
  bool parseInput(Graph& graph);
  bool parseSymbolDecl(Graph& graph);
  std::optional<Relation> parseRelation();
  std::optional<Comparison> parseComparison();
  bool parseStatement(Graph& graph);
  /// An optional trailing `loc("file":line[:column] at ...)` (Location.h):
  /// nullopt after an error, an empty location when there is none.
  std::optional<Location> parseOptionalLocation();
  bool parseGuards(Module& module);
  bool parseGuard(GuardSet& guards);
  std::optional<std::string> parseTypeNamePart();
  bool parseArgumentList(std::vector<Argument>& args, std::vector<KeywordArgument>* kwargs);
  std::optional<Argument> parseArgument();
  std::optional<Argument> parseNamed();
  std::optional<Argument> parseParenthesized();
  /// `complex(RE, IM)`, each part a float or integer literal.
  std::optional<Argument> parseComplex();
  bool atTypedTuple() const;
  std::optional<Argument> parseTypedTuple();
  std::optional<Argument> parseDictBody(std::string module, std::string qualname);
  std::optional<Argument> parseObject();
  std::optional<Type> parseType();
  std::optional<Type> parseTensorType();
  std::optional<Device> parseDevice();
  /// `sparse_coo(SPARSE_DIM, NNZ[, coalesced])` in a tensor type.
  struct SparseLayout {
    int64_t sparseDim = 0;
    SymExpr nnz;
    bool coalesced = false;
  };
  std::optional<SparseLayout> parseSparseLayout();
  bool parseSymList(llvm::SmallVectorImpl<SymExpr>& exprs);
  std::optional<int64_t> parseIntegerLiteral(bool negative);
  /// `register_hook %5 from <source>` or `register_hook %5 with function
  /// "<module>:<qualname>" line N [defaults (...)] [cells (...)]`, after
  /// `after`, appended to \p output.
  bool parseHookEffect(Node& output);
  bool parseCallEffect(Node& output);
  /// An int literal (`-` and digits, or digits) that does not fit in
  /// int64_t, consumed, as its canonical decimal; nullopt, consuming
  /// nothing, for anything else.
  std::optional<std::string> bigIntLiteral();
  std::optional<unsigned> parseIndex();

  // Symbolic integers, loosest binding first; the *Rest functions continue
  // from an operand already parsed (after a parenthesized group).
  std::optional<SymExpr> parseSymExpr();
  std::optional<SymExpr> parseSymSumRest(SymExpr lhs);
  std::optional<SymExpr> parseSymProduct();
  std::optional<SymExpr> parseSymProductRest(SymExpr lhs);
  std::optional<SymExpr> parseSymUnary();
  std::optional<SymExpr> parseSymPrimary();

  /// Counts one level of nesting for its lifetime; check ok() once.
  class Nesting {
  public:
    explicit Nesting(Parser& parser) : parser_(parser) { ++parser_.nesting_; }
    ~Nesting() { --parser_.nesting_; }
    bool ok() {
      if (parser_.nesting_ <= maxNesting)
        return true;
      parser_.error(parser_.tok_.loc(),
                    "nesting is deeper than " + llvm::Twine(maxNesting) + " levels");
      return false;
    }

  private:
    Parser& parser_;
  };
  std::optional<SymExpr> checkDepth(SymExpr e, llvm::SMLoc loc);

  // Value names of the graph being parsed.
  Node* lookupValue(llvm::StringRef name, llvm::SMLoc loc);
  bool checkNotDefined(llvm::StringRef name, llvm::SMLoc loc);
  /// The node for a call named \p name: the placeholder earlier uses made,
  /// or a new one. Null (after an error) if the name is already defined.
  std::unique_ptr<Node> defineValue(llvm::StringRef name, llvm::SMLoc loc);
  bool resolveForwardReferences();

  llvm::SourceMgr& sm_;
  Context& ctx_;
  Lexer lexer_;
  /// Where the text ends, for lexing again from a token already read.
  const char* bufferEnd_;
  Token tok_;
  std::string diagnostics_;
  bool failed_ = false;
  unsigned nesting_ = 0;

  struct ForwardReference {
    std::unique_ptr<Node> placeholder;
    llvm::SMLoc firstUse;
  };
  llvm::StringMap<Node*> values_;
  llvm::StringMap<ForwardReference> forwardRefs_;
};

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

std::nullopt_t Parser::error(llvm::SMLoc loc, const llvm::Twine& message) {
  if (!failed_) {
    failed_ = true;
    llvm::raw_string_ostream os(diagnostics_);
    sm_.PrintMessage(os, loc, llvm::SourceMgr::DK_Error, message, {}, {}, /*ShowColors=*/false);
  }
  return std::nullopt;
}

void Parser::note(llvm::SMLoc loc, const llvm::Twine& message) {
  llvm::raw_string_ostream os(diagnostics_);
  sm_.PrintMessage(os, loc, llvm::SourceMgr::DK_Note, message, {}, {}, /*ShowColors=*/false);
}

/// `call <source> [method <name>] line <n> (<args>) {<kwargs>}`; the
/// current token is `call`.
bool Parser::parseCallEffect(Node& output) {
  SideEffect effect;
  effect.kind = SideEffect::Kind::Call;
  Token source = lexer_.lexGuardSource();
  if (source.is(Token::Error))
    return error(source.loc(), lexer_.errorMessage()), false;
  effect.target = source.spelling.str();
  consume();
  if (consumeKeywordIf("method")) {
    if (!tok_.is(Token::Identifier))
      return expected("the name of the method called"), false;
    effect.method = tok_.spelling.str();
    consume();
  }
  if (!consumeKeywordIf("line") || !tok_.is(Token::Integer))
    return expected("'line' and the line the call was made from"), false;
  std::optional<int64_t> line = parseIntegerLiteral(false);
  if (!line)
    return false;
  effect.line = *line;
  if (!tok_.is(Token::LParen))
    return expected("the call's positional arguments, '(...)'"), false;
  std::optional<Argument> args = parseArgument();
  if (!args)
    return false;
  // `(%3)` reads as %3: one argument is written `(%3,)`.
  if (args->kind() != Argument::Kind::Tuple)
    args = Argument::tuple({std::move(*args)});
  if (!tok_.is(Token::LBrace))
    return expected("the call's keyword arguments, '{...}'"), false;
  std::optional<Argument> kwargs = parseArgument();
  if (!kwargs)
    return false;
  output.addSideEffect(std::move(effect), Argument::tuple({std::move(*args), std::move(*kwargs)}));
  return true;
}

bool Parser::parseHookEffect(Node& output) {
  SideEffect effect;
  effect.kind = SideEffect::Kind::Hook;
  effect.hookMethod = tok_.spelling.str();
  consume();
  std::vector<Argument> values;
  std::optional<Argument> tensor = parseArgument();
  if (!tensor)
    return false;
  values.push_back(std::move(*tensor));
  SideEffect::Function& function = effect.hookFunction;
  // A source is lexed from the text after the current token.
  auto takeSource = [&](std::string& into) {
    Token source = lexer_.lexGuardSource();
    if (source.is(Token::Error))
      return error(source.loc(), lexer_.errorMessage()), false;
    into = source.spelling.str();
    consume();
    return true;
  };
  if (tok_.isKeyword("from")) {
    if (!takeSource(function.source))
      return false;
    output.addSideEffect(std::move(effect), Argument::tuple(std::move(values)));
    return true;
  }
  if (!consumeKeywordIf("with"))
    return expected("'from <source>' or 'with function'"), false;
  function.imported = consumeKeywordIf("imported");
  if (!consumeKeywordIf("function"))
    return expected("'function'"), false;
  if (!tok_.is(Token::String))
    return expected("the function's \"module:qualified name\""), false;
  std::string name = unescapeString(tok_.spelling);
  consume();
  size_t colon = name.find(':');
  if (colon == std::string::npos)
    return error(tok_.loc(), "expected \"module:qualified name\", found \"" + name + "\""), false;
  function.module = name.substr(0, colon);
  function.qualname = name.substr(colon + 1);
  if (!consumeKeywordIf("line") || !tok_.is(Token::Integer))
    return expected("'line' and the function's first line"), false;
  std::optional<int64_t> line = parseIntegerLiteral(false);
  if (!line)
    return false;
  function.line = *line;
  if (consumeKeywordIf("defaults")) {
    if (!expect(Token::LParen, "("))
      return false;
    do {
      std::optional<Argument> value = parseArgument();
      if (!value)
        return false;
      values.push_back(std::move(*value));
      ++function.defaults;
    } while (consumeIf(Token::Comma));
    if (!expect(Token::RParen, ")"))
      return false;
  }
  if (consumeKeywordIf("cells")) {
    if (!expect(Token::LParen, "("))
      return false;
    do {
      if (!tok_.is(Token::Identifier))
        return expected("a free variable's name"), false;
      std::pair<std::string, std::string> cell{tok_.spelling.str(), ""};
      consume();
      if (tok_.is(Token::Colon)) {
        if (!takeSource(cell.second))
          return false;
      } else {
        if (!expect(Token::Equal, "="))
          return false;
        std::optional<Argument> value = parseArgument();
        if (!value)
          return false;
        values.push_back(std::move(*value));
      }
      function.cells.push_back(std::move(cell));
    } while (consumeIf(Token::Comma));
    if (!expect(Token::RParen, ")"))
      return false;
  }
  output.addSideEffect(std::move(effect), Argument::tuple(std::move(values)));
  return true;
}

std::nullopt_t Parser::expected(const llvm::Twine& what) {
  if (tok_.is(Token::Error))
    return error(tok_.loc(), lexer_.errorMessage());
  if (tok_.is(Token::Eof))
    return error(tok_.loc(), "expected " + what + ", found end of file");
  llvm::StringRef found(tok_.start, tok_.spelling.end() - tok_.start);
  if (tok_.is(Token::String) || (tok_.is(Token::GraphName) && tok_.start[1] == '"'))
    found = llvm::StringRef(tok_.start, tok_.spelling.end() + 1 - tok_.start);
  return error(tok_.loc(), "expected " + what + ", found '" + found + "'");
}

llvm::Error Parser::takeError() {
  llvm::StringRef text = llvm::StringRef(diagnostics_).rtrim('\n');
  return llvm::createStringError(llvm::inconvertibleErrorCode(), text);
}

bool Parser::expectClosingAngle() {
  if (tok_.is(Token::GreaterEqual)) {
    tok_.kind = Token::Equal;
    tok_.start += 1;
    tok_.spelling = tok_.spelling.drop_front();
    return true;
  }
  return expect(Token::Greater, ">");
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<Module>> Parser::parseModule() {
  auto module = std::make_unique<Module>(ctx_);
  while (!tok_.is(Token::Eof)) {
    if (tok_.isKeyword("guards")) {
      if (!parseGuards(*module))
        return takeError();
      continue;
    }
    GraphKind kind = GraphKind::Entry;
    if (tok_.isKeyword("kernel"))
      kind = GraphKind::Kernel;
    else if (tok_.isKeyword("backward"))
      kind = GraphKind::Backward;
    else if (tok_.isKeyword("subgraph"))
      kind = GraphKind::Subgraph;
    else if (!tok_.isKeyword("graph")) {
      expected("'graph', 'kernel', 'backward', 'subgraph' or 'guards'");
      return takeError();
    }
    if (!parseGraph(*module, kind))
      return takeError();
  }
  return module;
}

bool Parser::parseGraph(Module& module, GraphKind kind) {
  llvm::SMLoc loc = tok_.loc();
  consume(); // graph, kernel, backward or subgraph
  bool isKernel = kind == GraphKind::Kernel;
  if (!tok_.is(Token::GraphName))
    return expected(isKernel ? "a kernel name like @k0" : "a graph name like @MLP.forward"), false;
  bool quoted = tok_.start[1] == '"';
  std::string name = quoted ? unescapeString(tok_.spelling) : tok_.spelling.str();
  Graph& graph = isKernel                      ? module.addKernel(std::move(name))
                 : kind == GraphKind::Subgraph ? module.addSubgraph(std::move(name))
                 : kind == GraphKind::Backward ? module.addBackward(std::move(name))
                                               : module.addGraph(std::move(name));
  graph.setLoc(loc);
  consume();
  values_.clear();
  forwardRefs_.clear();

  if (!expect(Token::LParen, "("))
    return false;
  if (!tok_.is(Token::RParen)) {
    do {
      if (!parseInput(graph))
        return false;
    } while (consumeIf(Token::Comma));
  }
  if (!expect(Token::RParen, ")"))
    return false;

  if (consumeKeywordIf("symbols")) {
    if (!expect(Token::LBrace, "{"))
      return false;
    if (!tok_.is(Token::RBrace)) {
      do {
        if (!parseSymbolDecl(graph))
          return false;
      } while (consumeIf(Token::Comma));
    }
    if (!expect(Token::RBrace, "}"))
      return false;
  }
  // A kernel or subgraph assumes what its callers' guards checked; it has
  // no relations of its own to check.
  if (kind != GraphKind::Entry && tok_.isKeyword("relations"))
    return error(tok_.loc(), std::string(isKernel ? "a kernel" : "a subgraph") +
                                 " has no relations; they belong to the graphs that call it"),
           false;
  if (consumeKeywordIf("relations")) {
    if (!expect(Token::LBrace, "{"))
      return false;
    if (!tok_.is(Token::RBrace)) {
      do {
        std::optional<Relation> relation = parseRelation();
        if (!relation)
          return false;
        graph.relations().push_back(*relation);
      } while (consumeIf(Token::Comma));
    }
    if (!expect(Token::RBrace, "}"))
      return false;
  }

  if (!expect(Token::LBrace, "{"))
    return false;
  while (!tok_.is(Token::RBrace)) {
    if (tok_.is(Token::Eof))
      return expected("'}' to end graph @" + graph.name()), false;
    if (!parseStatement(graph))
      return false;
  }
  consume(); // }
  return resolveForwardReferences();
}

bool Parser::parseInput(Graph& graph) {
  if (!tok_.is(Token::ValueName))
    return expected("an input like '%x: <type> = L['x']'"), false;
  llvm::StringRef name = tok_.spelling;
  llvm::SMLoc loc = tok_.loc();
  consume();
  if (!expect(Token::Colon, ":"))
    return false;
  std::optional<Type> type = parseType();
  if (!type)
    return false;
  // A kernel's or subgraph's inputs are what its caller passes; an entry
  // graph's are read from the frame.
  std::string sourceText;
  if (graph.kind() != GraphKind::Entry) {
    if (tok_.is(Token::Equal))
      return error(tok_.loc(), std::string(graph.isKernel()     ? "a kernel's"
                                           : graph.isBackward() ? "a backward graph's"
                                                                : "a subgraph's") +
                                   " inputs have no source; its caller passes them"),
             false;
  } else {
    if (!tok_.is(Token::Equal))
      return expected("'=' and the input's source"), false;
    Token source = lexer_.lexSource();
    if (source.is(Token::Error))
      return error(source.loc(), lexer_.errorMessage()), false;
    sourceText = source.spelling.str();
    consume();
  }

  std::optional<Location> location = parseOptionalLocation();
  if (!location)
    return false;

  // Nothing can have used an input yet, so it needs no placeholder.
  if (!checkNotDefined(name, loc))
    return false;
  std::unique_ptr<Node> input = Node::input(name.str(), std::move(*type), std::move(sourceText));
  input->setLoc(loc);
  input->setLocation(std::move(*location));
  values_[name] = graph.append(std::move(input));
  return true;
}

bool Parser::parseSymbolDecl(Graph& graph) {
  if (!tok_.is(Token::Identifier))
    return expected("a symbol declaration like 's0: [2, inf]'"), false;
  SymbolDecl decl;
  decl.name = tok_.spelling.str();
  decl.loc = tok_.loc();
  consume();
  if (!expect(Token::Colon, ":") || !expect(Token::LBracket, "["))
    return false;
  auto parseBound = [&](bool isLower) -> std::optional<std::optional<int64_t>> {
    bool negative = consumeIf(Token::Minus);
    if (tok_.isKeyword("inf")) {
      if (negative != isLower)
        return error(tok_.loc(), isLower ? "a lower bound can be '-inf' but not 'inf'"
                                         : "an upper bound can be 'inf' but not '-inf'");
      consume();
      return std::optional<int64_t>();
    }
    if (!tok_.is(Token::Integer))
      return expected(isLower ? "an integer or '-inf'" : "an integer or 'inf'");
    std::optional<int64_t> value = parseIntegerLiteral(negative);
    if (!value)
      return std::nullopt;
    return value;
  };
  std::optional<std::optional<int64_t>> lo = parseBound(true);
  if (!lo || !expect(Token::Comma, ","))
    return false;
  std::optional<std::optional<int64_t>> hi = parseBound(false);
  if (!hi || !expect(Token::RBracket, "]"))
    return false;
  decl.range = {*lo, *hi};
  // A data-dependent value the graph itself computes (Assumptions.h).
  decl.unbacked = consumeKeywordIf("unbacked");
  graph.symbols().push_back(std::move(decl));
  return true;
}

std::optional<Relation> Parser::parseRelation() {
  Relation relation;
  relation.loc = tok_.loc();
  std::optional<Comparison> first = parseComparison();
  if (!first)
    return std::nullopt;
  relation.lhs = first->lhs;
  relation.kind = first->kind;
  relation.rhs = first->rhs;
  // A disjunction: `a == b or c == d`.
  while (consumeKeywordIf("or")) {
    std::optional<Comparison> next = parseComparison();
    if (!next)
      return std::nullopt;
    relation.alternatives.push_back(*next);
  }
  return relation;
}

std::optional<Comparison> Parser::parseComparison() {
  Comparison comparison;
  std::optional<SymExpr> lhs = parseSymExpr();
  if (!lhs)
    return std::nullopt;
  switch (tok_.kind) {
  case Token::EqualEqual:
    comparison.kind = RelationKind::Eq;
    break;
  case Token::NotEqual:
    comparison.kind = RelationKind::Ne;
    break;
  case Token::Less:
    comparison.kind = RelationKind::Lt;
    break;
  case Token::LessEqual:
    comparison.kind = RelationKind::Le;
    break;
  case Token::Greater:
    comparison.kind = RelationKind::Gt;
    break;
  case Token::GreaterEqual:
    comparison.kind = RelationKind::Ge;
    break;
  default:
    return expected("a comparison (==, !=, <, <=, >, >=)");
  }
  consume();
  std::optional<SymExpr> rhs = parseSymExpr();
  if (!rhs)
    return std::nullopt;
  comparison.lhs = *lhs;
  comparison.rhs = *rhs;
  return comparison;
}

bool Parser::parseStatement(Graph& graph) {
  llvm::SMLoc loc = tok_.loc();
  if (consumeKeywordIf("return")) {
    // One value, the function's result: `return (%a)` is `return %a`, and
    // a returned tuple is written as one, `return (%a,)`.
    std::optional<Argument> result = parseArgument();
    if (!result)
      return false;
    std::optional<Location> location = parseOptionalLocation();
    if (!location)
      return false;
    std::unique_ptr<Node> output = Node::output(std::move(*result));
    output->setLoc(loc);
    output->setLocation(std::move(*location));
    graph.append(std::move(output));
    return true;
  }
  if (consumeKeywordIf("after")) {
    // A side effect the rewritten code replays after the graph:
    // `after set L['self'].count = 2`, `after fill L['xs'] = [%3]`.
    Node* output = graph.nodes().empty() ? nullptr : &graph.nodes().back();
    if (!output || !output->isOutput())
      return error(loc, "'after' follows the 'return' it belongs to"), false;
    if (tok_.isKeyword("register_hook") || tok_.isKeyword("register_post_accumulate_grad_hook"))
      return parseHookEffect(*output);
    if (tok_.isKeyword("call"))
      return parseCallEffect(*output);
    if (!tok_.isKeyword("set") && !tok_.isKeyword("fill") && !tok_.isKeyword("extend") &&
        !tok_.isKeyword("update"))
      return expected("'set', 'fill', 'extend', 'update', 'call' or a hook registration"), false;
    SideEffect effect;
    effect.kind = tok_.isKeyword("set")      ? SideEffect::Kind::Set
                  : tok_.isKeyword("fill")   ? SideEffect::Kind::Fill
                  : tok_.isKeyword("update") ? SideEffect::Kind::Update
                                             : SideEffect::Kind::Extend;
    Token source = lexer_.lexGuardSource();
    if (source.is(Token::Error))
      return error(source.loc(), lexer_.errorMessage()), false;
    consume();
    effect.target = source.spelling.str();
    if (!expect(Token::Equal, "="))
      return false;
    std::optional<Argument> value = parseArgument();
    if (!value)
      return false;
    output->addSideEffect(std::move(effect), std::move(*value));
    return true;
  }
  if (!tok_.is(Token::ValueName))
    return expected("'%name = <operator>(...) : <type>', 'return' or 'after'"), false;
  llvm::StringRef name = tok_.spelling;
  consume();
  if (!expect(Token::Equal, "="))
    return false;
  // An operator overload, or `@name` for a call of a kernel (resolved by
  // the verifier, so kernels may be written after their callers).
  std::string op;
  if (tok_.is(Token::OpName)) {
    op = tok_.spelling.str();
  } else if (tok_.is(Token::GraphName)) {
    op.push_back('@');
    op += tok_.start[1] == '"' ? unescapeString(tok_.spelling) : tok_.spelling.str();
  } else
    return expected("an operator like aten::relu.default"), false;
  consume();
  std::vector<Argument> args;
  std::vector<KeywordArgument> kwargs;
  if (!parseArgumentList(args, &kwargs) || !expect(Token::Colon, ":"))
    return false;
  std::optional<Type> type = parseType();
  if (!type)
    return false;
  std::optional<Location> location = parseOptionalLocation();
  if (!location)
    return false;

  std::unique_ptr<Node> node = defineValue(name, loc);
  if (!node)
    return false;
  node->setTarget(std::move(op));
  node->args() = std::move(args);
  node->kwargs() = std::move(kwargs);
  node->setType(std::move(*type));
  node->setLoc(loc);
  node->setLocation(std::move(*location));
  graph.append(std::move(node));
  return true;
}

std::optional<Location> Parser::parseOptionalLocation() {
  if (!tok_.isKeyword("loc"))
    return Location();
  consume();
  if (!expect(Token::LParen, "("))
    return std::nullopt;
  std::vector<LocationFrame> frames;
  do {
    if (!tok_.is(Token::String))
      return expected("a file name in quotes, as in loc(\"model.py\":12:16)");
    LocationFrame frame;
    frame.file = unescapeString(tok_.spelling);
    consume();
    auto parsePosition = [&](unsigned& out) -> bool {
      if (!tok_.is(Token::Integer))
        return expected("a line or column number"), false;
      uint64_t value;
      if (tok_.spelling.getAsInteger(10, value) || value > std::numeric_limits<unsigned>::max())
        return error(tok_.loc(), "line or column number out of range"), false;
      out = static_cast<unsigned>(value);
      consume();
      return true;
    };
    if (!expect(Token::Colon, ":") || !parsePosition(frame.line))
      return std::nullopt;
    if (consumeIf(Token::Colon) && !parsePosition(frame.column))
      return std::nullopt;
    frames.push_back(std::move(frame));
  } while (consumeKeywordIf("at"));
  if (!expect(Token::RParen, ")"))
    return std::nullopt;
  return Location(std::move(frames));
}

//===----------------------------------------------------------------------===//
// Guards
//===----------------------------------------------------------------------===//

bool Parser::parseGuards(Module& module) {
  llvm::SMLoc loc = tok_.loc();
  consume(); // guards
  if (!tok_.is(Token::GraphName))
    return expected("the name of the guarded graph, like @MLP.forward"), false;
  bool quoted = tok_.start[1] == '"';
  std::string name = quoted ? unescapeString(tok_.spelling) : tok_.spelling.str();
  Graph* graph = module.findGraph(name);
  if (!graph && module.findKernel(name))
    return error(tok_.loc(), "guards for @" + name + ", which is a kernel; kernels have no guards"),
           false;
  if (!graph)
    return error(tok_.loc(), "guards for @" + name + ", but no graph of that name precedes them"),
           false;
  GuardSet& guards = graph->guards();
  if (guards.loc().isValid() || !guards.empty() || !guards.localNames().empty()) {
    error(tok_.loc(), "graph @" + name + " has a guards block already");
    if (guards.loc().isValid())
      note(guards.loc(), "previous guards block is here");
    return false;
  }
  guards.setLoc(loc);
  consume();

  if (!expect(Token::LParen, "("))
    return false;
  if (!tok_.is(Token::RParen)) {
    do {
      if (tok_.is(Token::Identifier))
        guards.localNames().push_back(tok_.spelling.str());
      else if (tok_.is(Token::String))
        guards.localNames().push_back(unescapeString(tok_.spelling));
      else
        return expected("a local variable name"), false;
      consume();
    } while (consumeIf(Token::Comma));
  }
  if (!expect(Token::RParen, ")") || !expect(Token::LBrace, "{"))
    return false;
  while (!consumeIf(Token::RBrace)) {
    if (!parseGuard(guards))
      return false;
  }
  return true;
}

/// A dict key written as a graph constant: an int, a string, a bool, a
/// finite float, none, or a tuple of those.
static std::optional<DictKey> dictKeyOf(const Argument& key) {
  switch (key.kind()) {
  case Argument::Kind::Sym:
    if (!key.symValue().isConstant())
      return std::nullopt;
    return DictKey::integer(key.symValue().constantValue());
  case Argument::Kind::String:
    return DictKey::str(key.stringValue());
  case Argument::Kind::Bool:
    return DictKey::boolean(key.boolValue());
  case Argument::Kind::None:
    return DictKey::none();
  case Argument::Kind::Float:
    if (!std::isfinite(key.floatValue()))
      return std::nullopt;
    return DictKey::floating(key.floatValue());
  case Argument::Kind::Tuple: {
    if (key.hasTupleType())
      return std::nullopt;
    std::vector<DictKey> elements;
    for (const Argument& element : key.elements()) {
      std::optional<DictKey> converted = dictKeyOf(element);
      if (!converted)
        return std::nullopt;
      elements.push_back(std::move(*converted));
    }
    return DictKey::tuple(std::move(elements));
  }
  default:
    return std::nullopt;
  }
}

bool Parser::parseGuard(GuardSet& guards) {
  llvm::SMLoc loc = tok_.loc();
  if (!tok_.is(Token::Identifier))
    return expected("a guard (tensor, type, equals, none, length, keys, empty, absent, "
                    "autograd_leaf, function, builtin, int, same, distinct, has_key, lacks_key, "
                    "grad_mode, "
                    "default_dtype, global_state, version) "
                    "or '}'"),
           false;
  llvm::StringRef word = tok_.spelling;
  auto guardSource = [&]() -> SourcePtr {
    Token source = lexer_.lexGuardSource();
    if (source.is(Token::Error))
      return error(source.loc(), lexer_.errorMessage()), nullptr;
    consume();
    llvm::Expected<SourcePtr> parsed = Source::parse(source.spelling);
    if (!parsed) // lexGuardSource took exactly one source
      return error(source.loc(), llvm::toString(parsed.takeError())), nullptr;
    return *parsed;
  };

  Guard guard;
  if (word == "int") {
    // A symbolic int argument: `int L['n'] : n`.
    SourcePtr source = guardSource();
    if (!source || !expect(Token::Colon, ":"))
      return false;
    std::optional<SymExpr> value = parseSymExpr();
    if (!value)
      return false;
    guard = Guard::symInt(std::move(source), *value);
  } else if (word == "same" || word == "distinct" || word == "has_key" || word == "lacks_key") {
    // Two sources: `same L['b'] : L['a']`. The second is lexed from just
    // after the colon, so the colon is not consumed as a token first (that
    // would lex the source's leading `L` as a name).
    SourcePtr source = guardSource();
    if (!source)
      return false;
    if (!tok_.is(Token::Colon))
      return expected("':'"), false;
    SourcePtr other = guardSource();
    if (!other)
      return false;
    if (word == "has_key" || word == "lacks_key")
      guard = Guard::keyMembership(std::move(source), std::move(other), word == "has_key");
    else
      guard = word == "same" ? Guard::same(std::move(source), std::move(other))
                             : Guard::distinct(std::move(source), std::move(other));
  } else if (word == "tensor" || word == "type" || word == "equals" || word == "none" ||
             word == "length" || word == "keys" || word == "empty" || word == "absent" ||
             word == "function" || word == "builtin" || word == "class" ||
             word == "autograd_leaf") {
    SourcePtr source = guardSource();
    if (!source)
      return false;
    if (word == "keys") {
      if (!expect(Token::Colon, ":"))
        return false;
      llvm::SMLoc keysLoc = tok_.loc();
      std::optional<Argument> keys;
      if (tok_.is(Token::LBracket))
        keys = parseArgument();
      else
        error(keysLoc, "expected the keys, a list of dict keys like [\"a\", 0, (1, true)]");
      if (!keys)
        return false;
      std::vector<DictKey> names;
      for (const Argument& key : keys->elements()) {
        std::optional<DictKey> name = dictKeyOf(key);
        if (!name)
          return error(keysLoc, "a keys guard lists dict keys: ints, strings, bools, finite "
                                "floats, none and tuples of those"),
                 false;
        names.push_back(std::move(*name));
      }
      guard = Guard::keysAre(std::move(source), std::move(names));
    } else if (word == "length") {
      if (!expect(Token::Colon, ":"))
        return false;
      if (!tok_.is(Token::Integer))
        return expected("the length, a non-negative integer"), false;
      std::optional<int64_t> length = parseIntegerLiteral(/*negative=*/false);
      if (!length)
        return false;
      guard = Guard::lengthIs(std::move(source), *length);
    } else if (word == "none") {
      guard = Guard::none(std::move(source));
    } else if (word == "empty") {
      guard = Guard::empty(std::move(source));
    } else if (word == "autograd_leaf") {
      guard = Guard::autogradLeaf(std::move(source));
    } else if (word == "absent") {
      if (source->kind() != Source::Kind::Attr && source->kind() != Source::Kind::ClassAttr)
        return error(loc, "an absent guard names an attribute, like L['self'].scale or "
                          "type(L['self']).scale"),
               false;
      guard = Guard::absent(std::move(source));
    } else if (word == "type" || word == "function" || word == "builtin" || word == "class") {
      if (!tok_.is(Token::Colon))
        return expected(word == "type" || word == "class"
                            ? "':' and the class, like ': torch.nn.modules.linear:Linear'"
                            : "':' and the function, like ': model:helper'"),
               false;
      std::optional<std::string> module = parseTypeNamePart();
      if (!module)
        return false;
      if (!tok_.is(Token::Colon))
        return expected("':' between the module and the qualified name"), false;
      std::optional<std::string> qualname = parseTypeNamePart();
      if (!qualname)
        return false;
      if (word == "type") {
        guard = Guard::type(std::move(source), std::move(*module), std::move(*qualname));
      } else if (word == "class") {
        guard = Guard::classIs(std::move(source), std::move(*module), std::move(*qualname));
      } else if (word == "builtin") {
        guard = Guard::builtin(std::move(source), std::move(*module), std::move(*qualname));
      } else {
        if (!tok_.isKeyword("line"))
          return expected("'line' and the function's first line"), false;
        consume();
        if (!tok_.is(Token::Integer))
          return expected("the function's first line, a non-negative integer"), false;
        std::optional<int64_t> line = parseIntegerLiteral(/*negative=*/false);
        if (!line)
          return false;
        guard = Guard::function(std::move(source), std::move(*module), std::move(*qualname), *line);
      }
    } else {
      if (!expect(Token::Colon, ":"))
        return false;
      if (word == "tensor") {
        llvm::SMLoc typeLoc = tok_.loc();
        std::optional<Type> type = parseType();
        if (!type)
          return false;
        if (!type->isTensor())
          return error(typeLoc, "a tensor guard takes a tensor type, not " + type->str()), false;
        guard = Guard::tensor(std::move(source), std::move(*type));
      } else if (std::optional<std::string> big = bigIntLiteral()) {
        // An int beyond 64 bits (BigIntGuard.h).
        guard = equalsBigInt(std::move(source), std::move(*big));
      } else {
        llvm::SMLoc valueLoc = tok_.loc();
        std::optional<Argument> constant;
        if (!tok_.is(Token::ValueName))
          constant = parseArgument();
        else
          error(valueLoc, "an equals guard compares with a constant, not a value");
        if (!constant)
          return false;
        Argument::Kind kind = constant->kind();
        bool scalar = kind == Argument::Kind::Bool || kind == Argument::Kind::Float ||
                      kind == Argument::Kind::String ||
                      (kind == Argument::Kind::Sym && constant->symValue().isConstant()) ||
                      isTorchConstant(kind);
        if (!scalar)
          return error(valueLoc, kind == Argument::Kind::None
                                     ? "an equals guard compares with a bool, int, float, "
                                       "string, dtype, device, layout or memory format; None "
                                       "is guarded by 'none SOURCE'"
                                     : "an equals guard compares with a bool, int, float, "
                                       "string, dtype, device, layout or memory format"),
                 false;
        guard = Guard::equals(std::move(source), std::move(*constant));
      }
    }
  } else if (word == "grad_mode") {
    consume();
    if (!tok_.isKeyword("true") && !tok_.isKeyword("false"))
      return expected("'true' or 'false'"), false;
    guard = Guard::gradMode(tok_.spelling == "true");
    consume();
  } else if (word == "default_dtype") {
    consume();
    std::optional<DType> dtype =
        tok_.is(Token::Identifier) ? parseDType(tok_.spelling) : std::nullopt;
    if (!dtype)
      return expected("a dtype like f32"), false;
    guard = Guard::defaultDType(*dtype);
    consume();
  } else if (word == "global_state") {
    consume();
    std::optional<GlobalState> state =
        tok_.is(Token::Identifier) ? parseGlobalState(tok_.spelling) : std::nullopt;
    if (!state)
      return expected("the state, one of deterministic_algorithms, flush_denormal, "
                      "torch_function_modes, torch_dispatch_modes, deterministic_fill, mkldnn, "
                      "mkldnn_deterministic, nnpack, cpu_fp16_reduction, fp32_precision_matmul, "
                      "fp32_precision_conv, fp32_precision_rnn, flash_sdp, math_sdp, "
                      "math_sdp_reduction"),
             false;
    consume();
    std::optional<int64_t> value;
    if (tok_.is(Token::Identifier) || tok_.is(Token::Integer))
      value = parseGlobalStateValue(*state, tok_.spelling);
    if (!value)
      return expected(*state == GlobalState::DeterministicAlgorithms ? "true, false or warn_only"
                      : *state == GlobalState::TorchFunctionModes ||
                              *state == GlobalState::TorchDispatchModes
                          ? "a mode count, like 0"
                      : *state == GlobalState::Fp32PrecisionMatmul ||
                              *state == GlobalState::Fp32PrecisionConv ||
                              *state == GlobalState::Fp32PrecisionRnn
                          ? "ieee, tf32 or bf16"
                          : "true or false"),
             false;
    consume();
    guard = Guard::globalState(*state, *value);
  } else if (word == "version") {
    consume();
    if (!tok_.is(Token::Identifier))
      return expected("what the version is of, like 'torch'"), false;
    std::string of = tok_.spelling.str();
    consume();
    if (!tok_.is(Token::String))
      return expected("the version as a string, like \"2.13.0\""), false;
    guard = Guard::versionIs(std::move(of), unescapeString(tok_.spelling));
    consume();
  } else {
    return error(loc, "unknown guard '" + word +
                          "' (expected tensor, type, equals, none, length, keys, empty, "
                          "absent, autograd_leaf, function, builtin, int, grad_mode, "
                          "default_dtype, "
                          "global_state or version)"),
           false;
  }
  guard.loc = loc;
  guards.add(std::move(guard));
  return true;
}

/// One part of `module:qualname`, with the current token the ':' before it;
/// leaves the token after it current.
std::optional<std::string> Parser::parseTypeNamePart() {
  Token part = lexer_.lexTypeNamePart();
  if (part.is(Token::Error))
    return error(part.loc(), lexer_.errorMessage());
  consume();
  if (part.is(Token::String))
    return unescapeString(part.spelling);
  return part.spelling.str();
}

//===----------------------------------------------------------------------===//
// Value names
//===----------------------------------------------------------------------===//

Node* Parser::lookupValue(llvm::StringRef name, llvm::SMLoc loc) {
  if (Node* node = values_.lookup(name))
    return node;
  ForwardReference& ref = forwardRefs_[name];
  if (!ref.placeholder) {
    ref.placeholder = Node::call(name.str(), "", {}, {}, Type());
    ref.firstUse = loc;
  }
  return ref.placeholder.get();
}

bool Parser::checkNotDefined(llvm::StringRef name, llvm::SMLoc loc) {
  Node* previous = values_.lookup(name);
  if (!previous)
    return true;
  error(loc, "redefinition of value '%" + name + "'");
  note(previous->loc(), "previous definition is here");
  return false;
}

std::unique_ptr<Node> Parser::defineValue(llvm::StringRef name, llvm::SMLoc loc) {
  if (!checkNotDefined(name, loc))
    return nullptr;
  std::unique_ptr<Node> node;
  auto it = forwardRefs_.find(name);
  if (it != forwardRefs_.end()) {
    node = std::move(it->second.placeholder);
    forwardRefs_.erase(it);
  } else {
    node = Node::call(name.str(), "", {}, {}, Type());
  }
  values_[name] = node.get();
  return node;
}

bool Parser::resolveForwardReferences() {
  if (forwardRefs_.empty())
    return true;
  // Report the first use in the text, not the first in hash order.
  const ForwardReference* first = nullptr;
  llvm::StringRef firstName;
  for (const auto& entry : forwardRefs_) {
    if (!first || entry.second.firstUse.getPointer() < first->firstUse.getPointer()) {
      first = &entry.second;
      firstName = entry.first();
    }
  }
  error(first->firstUse, "use of undefined value '%" + firstName + "'");
  return false;
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

bool Parser::parseArgumentList(std::vector<Argument>& args, std::vector<KeywordArgument>* kwargs) {
  if (!expect(Token::LParen, "("))
    return false;
  if (consumeIf(Token::RParen))
    return true;
  // A trailing comma is accepted, as in Python.
  do {
    if (tok_.is(Token::Identifier) && peek().is(Token::Equal)) {
      if (!kwargs)
        return error(tok_.loc(), "keyword arguments are not allowed here"), false;
      KeywordArgument kwarg;
      kwarg.name = tok_.spelling.str();
      consume();
      consume(); // =
      std::optional<Argument> value = parseArgument();
      if (!value)
        return false;
      kwarg.value = std::move(*value);
      kwargs->push_back(std::move(kwarg));
      continue; // to the loop condition
    }
    if (kwargs && !kwargs->empty())
      return error(tok_.loc(), "positional argument after keyword arguments"), false;
    std::optional<Argument> arg = parseArgument();
    if (!arg)
      return false;
    args.push_back(std::move(*arg));
  } while (consumeIf(Token::Comma) && !tok_.is(Token::RParen));
  return expect(Token::RParen, ")");
}

std::optional<unsigned> Parser::parseIndex() {
  if (!tok_.is(Token::Integer))
    return expected("a result index");
  unsigned index;
  if (tok_.spelling.getAsInteger(10, index))
    return error(tok_.loc(), "result index too large");
  consume();
  return index;
}

std::optional<Argument> Parser::parseArgument() {
  Nesting nesting(*this);
  if (!nesting.ok())
    return std::nullopt;
  switch (tok_.kind) {
  case Token::ValueName: {
    Node* node = lookupValue(tok_.spelling, tok_.loc());
    consume();
    std::optional<unsigned> index;
    if (consumeIf(Token::Hash)) {
      index = parseIndex();
      if (!index)
        return std::nullopt;
    }
    return Argument::value(node, index);
  }
  case Token::LBracket: {
    consume();
    std::vector<Argument> elements;
    if (!tok_.is(Token::RBracket)) {
      do {
        std::optional<Argument> element = parseArgument();
        if (!element)
          return std::nullopt;
        elements.push_back(std::move(*element));
      } while (consumeIf(Token::Comma) && !tok_.is(Token::RBracket));
    }
    if (!expect(Token::RBracket, "]"))
      return std::nullopt;
    return Argument::list(std::move(elements));
  }
  case Token::LParen:
    return parseParenthesized();
  case Token::LBrace:
    return parseDictBody("", "");
  case Token::Identifier:
  case Token::String:
    if (atTypedTuple())
      return parseTypedTuple();
    if (tok_.isKeyword("object"))
      return parseObject();
    if (tok_.isKeyword("named"))
      return parseNamed();
    break;
  default:
    break;
  }
  switch (tok_.kind) {
  case Token::String: {
    std::string text = unescapeString(tok_.spelling);
    consume();
    return Argument::string(std::move(text));
  }
  case Token::Float: {
    double value = std::strtod(tok_.spelling.str().c_str(), nullptr);
    consume();
    return Argument::floating(value);
  }
  case Token::Minus: {
    Token next = peek();
    if (next.is(Token::Float) || (next.isKeyword("inf"))) {
      consume();
      double value = next.is(Token::Float) ? std::strtod(next.spelling.str().c_str(), nullptr)
                                           : std::numeric_limits<double>::infinity();
      consume();
      return Argument::floating(-value);
    }
    break;
  }
  case Token::Identifier: {
    llvm::StringRef word = tok_.spelling;
    if (word == "true" || word == "false") {
      consume();
      return Argument::boolean(word == "true");
    }
    if (word == "none") {
      consume();
      return Argument::none();
    }
    if (word == "inf" || word == "nan") {
      consume();
      return Argument::floating(word == "inf" ? std::numeric_limits<double>::infinity()
                                              : std::numeric_limits<double>::quiet_NaN());
    }
    if (word == "complex" && peek().is(Token::LParen))
      return parseComplex();
    if (std::optional<DType> dtype = parseDType(word)) {
      consume();
      return Argument::dtype(*dtype);
    }
    if (std::optional<Layout> layout = parseLayout(word)) {
      consume();
      return Argument::layout(*layout);
    }
    if (std::optional<MemoryFormat> format = parseMemoryFormat(word)) {
      consume();
      return Argument::memoryFormat(*format);
    }
    if (parseDeviceKind(word)) {
      std::optional<Device> device = parseDevice();
      if (!device)
        return std::nullopt;
      return Argument::device(*device);
    }
    break;
  }
  default:
    break;
  }
  std::optional<SymExpr> e = parseSymExpr();
  if (!e)
    return std::nullopt;
  return Argument::sym(*e);
}

/// Whether the current token starts `module:qualname(`: the module is lexed
/// again from the token's start, since a dotted module name is not one
/// token of the ordinary grammar. Nothing else in an argument has a name,
/// a colon, a name and a parenthesis in a row (a device `cpu:0` has no
/// parenthesis after it).
bool Parser::atTypedTuple() const {
  Lexer ahead(llvm::StringRef(tok_.start, bufferEnd_ - tok_.start));
  if (ahead.lexTypeNamePart().is(Token::Error) || !ahead.lex().is(Token::Colon) ||
      ahead.lexTypeNamePart().is(Token::Error))
    return false;
  Token open = ahead.lex();
  return open.is(Token::LParen) || open.is(Token::LBrace);
}

/// `module:qualname(a, ...)`, a tuple of that Python type.
std::optional<Argument> Parser::parseTypedTuple() {
  lexer_ = Lexer(llvm::StringRef(tok_.start, bufferEnd_ - tok_.start));
  Token part = lexer_.lexTypeNamePart();
  std::string module = part.is(Token::String) ? unescapeString(part.spelling) : part.spelling.str();
  if (module.empty())
    return error(part.loc(), "a tuple type needs a module before the ':'");
  consume(); // the module; the ':' is current
  std::optional<std::string> qualname = parseTypeNamePart();
  if (!qualname)
    return std::nullopt;
  if (tok_.is(Token::LBrace))
    return parseDictBody(std::move(module), std::move(*qualname));
  std::vector<Argument> elements;
  if (!parseArgumentList(elements, /*kwargs=*/nullptr))
    return std::nullopt;
  return Argument::typedTuple(std::move(module), std::move(*qualname), std::move(elements));
}

/// `{key: value, ...}`, a dict (of the type \p module:\p qualname when
/// given); the current token is the `{`.
std::optional<Argument> Parser::parseDictBody(std::string module, std::string qualname) {
  consume(); // {
  std::vector<Argument> keys, values;
  if (!tok_.is(Token::RBrace)) {
    do {
      std::optional<Argument> key = parseArgument();
      if (!key)
        return std::nullopt;
      if (!expect(Token::Colon, ":"))
        return std::nullopt;
      std::optional<Argument> value = parseArgument();
      if (!value)
        return std::nullopt;
      keys.push_back(std::move(*key));
      values.push_back(std::move(*value));
    } while (consumeIf(Token::Comma) && !tok_.is(Token::RBrace));
  }
  if (!expect(Token::RBrace, "}"))
    return std::nullopt;
  if (module.empty())
    return Argument::dict(std::move(keys), std::move(values));
  return Argument::typedDict(std::move(module), std::move(qualname), std::move(keys),
                             std::move(values));
}

/// `named module:qualname` or `named module`, an object imported by name;
/// the current token is `named`.
std::optional<Argument> Parser::parseNamed() {
  consume(); // named
  lexer_ = Lexer(llvm::StringRef(tok_.start, bufferEnd_ - tok_.start));
  Token part = lexer_.lexTypeNamePart();
  if (part.is(Token::Error))
    return error(part.loc(), "expected the object's name, module:qualname or module");
  std::string module = part.is(Token::String) ? unescapeString(part.spelling) : part.spelling.str();
  if (module.empty())
    return error(part.loc(), "a named object needs its module");
  consume(); // the module
  if (!tok_.is(Token::Colon))
    return Argument::named(std::move(module), "");
  std::optional<std::string> qualname = parseTypeNamePart();
  if (!qualname)
    return std::nullopt;
  return Argument::named(std::move(module), std::move(*qualname));
}

/// `object module:qualname{name = value, ...}`, an object of that class with
/// those attributes; the current token is `object`.
std::optional<Argument> Parser::parseObject() {
  consume(); // object
  lexer_ = Lexer(llvm::StringRef(tok_.start, bufferEnd_ - tok_.start));
  Token part = lexer_.lexTypeNamePart();
  if (part.is(Token::Error))
    return error(part.loc(), "expected the object's type, module:qualname");
  std::string module = part.is(Token::String) ? unescapeString(part.spelling) : part.spelling.str();
  consume(); // the module; the ':' is current
  if (!tok_.is(Token::Colon))
    return expected("':' between the module and the qualified name");
  std::optional<std::string> qualname = parseTypeNamePart();
  if (!qualname)
    return std::nullopt;
  if (!expect(Token::LBrace, "{"))
    return std::nullopt;
  std::vector<std::string> names;
  std::vector<Argument> values;
  if (!tok_.is(Token::RBrace)) {
    do {
      if (!tok_.is(Token::Identifier) && !tok_.is(Token::String))
        return expected("an attribute name");
      names.push_back(tok_.is(Token::String) ? unescapeString(tok_.spelling) : tok_.spelling.str());
      consume();
      if (!expect(Token::Equal, "="))
        return std::nullopt;
      std::optional<Argument> value = parseArgument();
      if (!value)
        return std::nullopt;
      values.push_back(std::move(*value));
    } while (consumeIf(Token::Comma) && !tok_.is(Token::RBrace));
  }
  if (!expect(Token::RBrace, "}"))
    return std::nullopt;
  // An object of a dict class: `{key: value, ...}`, its items.
  if (tok_.is(Token::LBrace)) {
    std::optional<Argument> items = parseDictBody("", "");
    if (!items)
      return std::nullopt;
    if (items->dictKeys().empty())
      return error(tok_.loc(), "an object's items are written only when there are some");
    return Argument::object(std::move(module), std::move(*qualname), std::move(names),
                            std::move(values), items->dictKeys(), items->elements());
  }
  return Argument::object(std::move(module), std::move(*qualname), std::move(names),
                          std::move(values));
}

/// `()` and `(a, ...)` are tuples, `(a,)` a one-element tuple, and `(a)` is
/// just `a`, possibly the start of a longer symbolic integer: `(s0 + 1)*2`.
std::optional<Argument> Parser::parseComplex() {
  consume(); // complex
  consume(); // (
  double parts[2];
  for (int i = 0; i < 2; ++i) {
    if (i && !expect(Token::Comma, ","))
      return std::nullopt;
    llvm::SMLoc loc = tok_.loc();
    std::optional<Argument> part = parseArgument();
    if (!part)
      return std::nullopt;
    if (part->kind() == Argument::Kind::Float)
      parts[i] = part->floatValue();
    else if (part->kind() == Argument::Kind::Sym && part->symValue().isConstant())
      parts[i] = static_cast<double>(part->symValue().constantValue());
    else {
      error(loc, "a part of a complex number is a float or integer literal");
      return std::nullopt;
    }
  }
  if (!expect(Token::RParen, ")"))
    return std::nullopt;
  return Argument::complex({parts[0], parts[1]});
}

std::optional<Argument> Parser::parseParenthesized() {
  consume(); // (
  if (consumeIf(Token::RParen))
    return Argument::tuple({});
  std::optional<Argument> first = parseArgument();
  if (!first)
    return std::nullopt;
  if (consumeIf(Token::RParen)) {
    if (first->kind() != Argument::Kind::Sym)
      return first;
    std::optional<SymExpr> e = parseSymProductRest(first->symValue());
    if (e)
      e = parseSymSumRest(*e);
    if (!e)
      return std::nullopt;
    return Argument::sym(*e);
  }
  std::vector<Argument> elements;
  elements.push_back(std::move(*first));
  while (consumeIf(Token::Comma)) {
    if (tok_.is(Token::RParen))
      break;
    std::optional<Argument> element = parseArgument();
    if (!element)
      return std::nullopt;
    elements.push_back(std::move(*element));
  }
  if (!expect(Token::RParen, ")"))
    return std::nullopt;
  return Argument::tuple(std::move(elements));
}

std::optional<Device> Parser::parseDevice() {
  std::optional<DeviceKind> kind =
      tok_.is(Token::Identifier) ? parseDeviceKind(tok_.spelling) : std::nullopt;
  if (!kind)
    return expected("a device (cpu, cuda, cuda:0, meta)");
  consume();
  Device device{*kind, -1};
  if (consumeIf(Token::Colon)) {
    if (!tok_.is(Token::Integer) || tok_.spelling.getAsInteger(10, device.index) ||
        device.index < 0)
      return expected("a device index");
    consume();
  }
  return device;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

std::optional<Type> Parser::parseType() {
  Nesting nesting(*this);
  if (!nesting.ok())
    return std::nullopt;
  if (!tok_.is(Token::Identifier))
    return expected("a type");
  llvm::StringRef word = tok_.spelling;
  if (word == "tensor")
    return parseTensorType();
  if (word == "none" || word == "float" || word == "bool") {
    consume();
    return word == "none" ? Type::none() : word == "float" ? Type::floating() : Type::boolean();
  }
  if (word == "int") {
    consume();
    if (!consumeIf(Token::Less))
      return Type::integer();
    std::optional<SymExpr> value = parseSymExpr();
    if (!value || !expectClosingAngle())
      return std::nullopt;
    return Type::integer(*value);
  }
  if (word == "tuple" || word == "list") {
    consume();
    if (!expect(Token::Less, "<"))
      return std::nullopt;
    std::vector<Type> elements;
    if (!tok_.is(Token::Greater) && !tok_.is(Token::GreaterEqual)) {
      do {
        std::optional<Type> element = parseType();
        if (!element)
          return std::nullopt;
        elements.push_back(std::move(*element));
      } while (consumeIf(Token::Comma));
    }
    if (!expectClosingAngle())
      return std::nullopt;
    return word == "tuple" ? Type::tuple(elements) : Type::list(elements);
  }
  return expected("a type (tensor<...>, int, float, bool, none, tuple<...>, list<...>)");
}

std::optional<Type> Parser::parseTensorType() {
  consume(); // tensor
  if (!expect(Token::Less, "<"))
    return std::nullopt;
  if (!tok_.is(Token::Identifier))
    return expected("a dtype");
  std::optional<DType> dtype = parseDType(tok_.spelling);
  if (!dtype)
    return error(tok_.loc(), "unknown dtype '" + tok_.spelling +
                                 "' (expected f32, f64, f16, bf16, i64, i32, i16, i8, u8, "
                                 "bool, c64 or c128)");
  consume();
  llvm::SmallVector<SymExpr, 4> sizes, strides;
  if (!expect(Token::Comma, ",") || !parseSymList(sizes))
    return std::nullopt;
  bool hasStrides = false, requiresGrad = false;
  Device device;
  std::optional<SparseLayout> sparse;
  // Optional parts, in this order: strides or a sparse layout, device,
  // requires_grad.
  if (tok_.is(Token::Comma) && peek().is(Token::LBracket)) {
    consume();
    if (!parseSymList(strides))
      return std::nullopt;
    hasStrides = true;
  } else if (tok_.is(Token::Comma) && peek().isKeyword("sparse_coo")) {
    consume();
    sparse = parseSparseLayout();
    if (!sparse)
      return std::nullopt;
  }
  if (tok_.is(Token::Comma) && peek().is(Token::Identifier) && parseDeviceKind(peek().spelling)) {
    consume();
    std::optional<Device> parsed = parseDevice();
    if (!parsed)
      return std::nullopt;
    device = *parsed;
  }
  if (tok_.is(Token::Comma) && peek().isKeyword("requires_grad")) {
    consume();
    consume();
    requiresGrad = true;
  }
  if (tok_.is(Token::Comma)) {
    consume();
    return expected("strides or 'sparse_coo(...)', a device or 'requires_grad', in that order");
  }
  if (!expectClosingAngle())
    return std::nullopt;
  if (sparse)
    return Type::sparseCooTensor(*dtype, sizes, sparse->sparseDim, sparse->nnz, sparse->coalesced,
                                 device, requiresGrad);
  if (!hasStrides)
    return Type::contiguousTensor(ctx_, *dtype, sizes, device, requiresGrad);
  return Type::tensor(*dtype, sizes, strides, device, requiresGrad);
}

std::optional<Parser::SparseLayout> Parser::parseSparseLayout() {
  consume(); // sparse_coo
  if (!expect(Token::LParen, "("))
    return std::nullopt;
  if (!tok_.is(Token::Integer))
    return expected("the number of sparse dimensions");
  SparseLayout layout;
  if (tok_.spelling.getAsInteger(10, layout.sparseDim))
    return error(tok_.loc(), "the number of sparse dimensions is too large");
  consume();
  if (!expect(Token::Comma, ","))
    return std::nullopt;
  std::optional<SymExpr> nnz = parseSymExpr();
  if (!nnz)
    return std::nullopt;
  layout.nnz = *nnz;
  if (tok_.is(Token::Comma) && peek().isKeyword("coalesced")) {
    consume();
    consume();
    layout.coalesced = true;
  }
  if (!expect(Token::RParen, ")"))
    return std::nullopt;
  return layout;
}

bool Parser::parseSymList(llvm::SmallVectorImpl<SymExpr>& exprs) {
  if (!expect(Token::LBracket, "["))
    return false;
  if (consumeIf(Token::RBracket))
    return true;
  do {
    std::optional<SymExpr> e = parseSymExpr();
    if (!e)
      return false;
    exprs.push_back(*e);
  } while (consumeIf(Token::Comma));
  return expect(Token::RBracket, "]");
}

//===----------------------------------------------------------------------===//
// Symbolic integers
//===----------------------------------------------------------------------===//

std::optional<int64_t> Parser::parseIntegerLiteral(bool negative) {
  uint64_t magnitude;
  uint64_t limit = uint64_t(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
  if (tok_.spelling.getAsInteger(10, magnitude) || magnitude > limit)
    return error(tok_.loc(), "integer literal does not fit in 64 bits");
  consume();
  return negative ? int64_t(0 - magnitude) : int64_t(magnitude);
}

std::optional<std::string> Parser::bigIntLiteral() {
  bool negative = tok_.is(Token::Minus) && peek().is(Token::Integer);
  Token digits = negative ? peek() : tok_;
  if (!digits.is(Token::Integer))
    return std::nullopt;
  std::optional<std::string> decimal = canonicalDecimal(digits.spelling, negative);
  if (!decimal || !isBigIntDecimal(*decimal))
    return std::nullopt;
  if (negative)
    consume();
  consume();
  return decimal;
}

std::optional<SymExpr> Parser::checkDepth(SymExpr e, llvm::SMLoc loc) {
  if (e.depth() <= maxSymDepth)
    return e;
  return error(loc,
               "symbolic integer is nested deeper than " + llvm::Twine(maxSymDepth) + " levels");
}

std::optional<SymExpr> Parser::parseSymExpr() {
  std::optional<SymExpr> lhs = parseSymProduct();
  if (!lhs)
    return std::nullopt;
  return parseSymSumRest(*lhs);
}

std::optional<SymExpr> Parser::parseSymSumRest(SymExpr lhs) {
  llvm::SMLoc loc = tok_.loc();
  while (tok_.is(Token::Plus) || tok_.is(Token::Minus)) {
    bool plus = tok_.is(Token::Plus);
    consume();
    std::optional<SymExpr> rhs = parseSymProduct();
    if (!rhs)
      return std::nullopt;
    lhs = plus ? lhs + *rhs : lhs - *rhs;
    if (!checkDepth(lhs, loc))
      return std::nullopt;
  }
  return lhs;
}

std::optional<SymExpr> Parser::parseSymProduct() {
  std::optional<SymExpr> lhs = parseSymUnary();
  if (!lhs)
    return std::nullopt;
  return parseSymProductRest(*lhs);
}

std::optional<SymExpr> Parser::parseSymProductRest(SymExpr lhs) {
  llvm::SMLoc loc = tok_.loc();
  while (tok_.is(Token::Star) || tok_.isKeyword("floordiv") || tok_.isKeyword("mod")) {
    Token op = tok_;
    consume();
    std::optional<SymExpr> rhs = parseSymUnary();
    if (!rhs)
      return std::nullopt;
    if (op.is(Token::Star))
      lhs = lhs * *rhs;
    else if (op.spelling == "floordiv")
      lhs = lhs.floorDiv(*rhs);
    else
      lhs = lhs.mod(*rhs);
    if (!checkDepth(lhs, loc))
      return std::nullopt;
  }
  return lhs;
}

std::optional<SymExpr> Parser::parseSymUnary() {
  Nesting nesting(*this);
  if (!nesting.ok())
    return std::nullopt;
  if (!consumeIf(Token::Minus))
    return parseSymPrimary();
  // A literal directly after '-' is read as one negative number, so the
  // smallest int64 can be written.
  if (tok_.is(Token::Integer)) {
    std::optional<int64_t> value = parseIntegerLiteral(/*negative=*/true);
    if (!value)
      return std::nullopt;
    return ctx_.constant(*value);
  }
  std::optional<SymExpr> operand = parseSymUnary();
  if (!operand)
    return std::nullopt;
  return -*operand;
}

std::optional<SymExpr> Parser::parseSymPrimary() {
  if (tok_.is(Token::Integer)) {
    std::optional<int64_t> value = parseIntegerLiteral(/*negative=*/false);
    if (!value)
      return std::nullopt;
    return ctx_.constant(*value);
  }
  if (consumeIf(Token::LParen)) {
    std::optional<SymExpr> e = parseSymExpr();
    if (!e || !expect(Token::RParen, ")"))
      return std::nullopt;
    return e;
  }
  if (tok_.isKeyword("min") || tok_.isKeyword("max")) {
    bool isMin = tok_.spelling == "min";
    consume();
    if (!expect(Token::LParen, "("))
      return std::nullopt;
    llvm::SmallVector<SymExpr, 4> operands;
    do {
      std::optional<SymExpr> e = parseSymExpr();
      if (!e)
        return std::nullopt;
      operands.push_back(*e);
    } while (consumeIf(Token::Comma));
    if (!expect(Token::RParen, ")"))
      return std::nullopt;
    return isMin ? SymExpr::min(operands) : SymExpr::max(operands);
  }
  if (tok_.is(Token::Identifier) && !isReservedWord(tok_.spelling)) {
    SymExpr symbol = ctx_.symbol(tok_.spelling);
    consume();
    return symbol;
  }
  if (tok_.is(Token::Identifier))
    return error(tok_.loc(),
                 "expected a symbolic integer, found reserved word '" + tok_.spelling + "'");
  return expected("a symbolic integer");
}

llvm::Expected<SymExpr> Parser::parseWholeSymExpr() {
  std::optional<SymExpr> e = parseSymExpr();
  if (e && !tok_.is(Token::Eof))
    expected("end of expression");
  if (failed_)
    return takeError();
  return *e;
}

llvm::Expected<Type> Parser::parseWholeType() {
  std::optional<Type> type = parseType();
  if (type && !tok_.is(Token::Eof))
    expected("end of type");
  if (failed_)
    return takeError();
  return std::move(*type);
}

} // namespace

llvm::Expected<std::unique_ptr<Module>> parseModule(llvm::SourceMgr& sm, Context& ctx) {
  return Parser(sm, sm.getMainFileID(), ctx).parseModule();
}

llvm::Expected<SymExpr> parseSymExpr(llvm::StringRef text, Context& ctx) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "<expr>"), llvm::SMLoc());
  return Parser(sm, sm.getMainFileID(), ctx).parseWholeSymExpr();
}

llvm::Expected<Type> parseType(llvm::StringRef text, Context& ctx) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "<type>"), llvm::SMLoc());
  return Parser(sm, sm.getMainFileID(), ctx).parseWholeType();
}

} // namespace dync::ir
