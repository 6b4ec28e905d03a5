//===- DynamicSpec.cpp - `--dynamic ARG:DIM=SYMBOL[LO,HI]` -----------------===//
#include "frontend/capture/DynamicSpec.h"

#include "ir/Syntax.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace dync::capture {

namespace {

bool isIdentifier(llvm::StringRef text) {
  if (text.empty() || !(llvm::isAlpha(text[0]) || text[0] == '_'))
    return false;
  return llvm::all_of(text, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

llvm::Error malformed(llvm::StringRef text, const llvm::Twine& why) {
  return llvm::createStringError(
      "malformed --dynamic '" + text + "': " + why +
      "; expected ARG:DIM=SYMBOL or ARG:DIM=SYMBOL[LO,HI] for a tensor's "
      "dimension, e.g. x:0=batch[1,1024], ARG=SYMBOL[LO,HI] for an "
      "int argument, e.g. n=n[1,64], or ARG.ATTR=SYMBOL, ARG[I]=SYMBOL for an int inside "
      "one, e.g. cfg.n=n[1,64]");
}

llvm::Expected<std::optional<int64_t>> parseBound(llvm::StringRef whole, llvm::StringRef text) {
  text = text.trim();
  if (text.empty() || text == "inf" || text == "-inf")
    return std::nullopt;
  int64_t value = 0;
  if (text.getAsInteger(10, value))
    return malformed(whole, "range bound '" + text + "' is not an integer");
  return value;
}

} // namespace

llvm::Expected<DynamicSpec> parseDynamicSpec(llvm::StringRef text) {
  DynamicSpec spec;
  spec.text = text.str();
  auto [target, rest] = text.split('=');
  if (rest.empty() && !text.contains('='))
    return malformed(text, "no '=SYMBOL'");
  target = target.trim();
  // `cfg.n=SYMBOL`, `dims[1]=SYMBOL`: an int inside the argument.
  size_t pathStart = target.find_first_of(".[");
  if (pathStart != llvm::StringRef::npos && target.find(':') == llvm::StringRef::npos) {
    llvm::StringRef path = target.drop_front(pathStart);
    if (llvm::Expected<ir::SourcePtr> parsed = ir::Source::parse("L['x']" + path.str()); !parsed) {
      llvm::consumeError(parsed.takeError());
      return malformed(text, "'" + path +
                                 "' is not a path of attribute and item reads such as .n, [1] "
                                 "or ['n']");
    }
    spec.path = path.str();
    target = target.take_front(pathStart);
  }
  auto [argument, dim] = target.split(':');
  argument = argument.trim();
  if (!isIdentifier(argument))
    return malformed(text, "'" + argument + "' is not an argument name");
  // `n=SYMBOL[LO,HI]`: a Python int argument made symbolic.
  if (!target.contains(':')) {
    spec.intArgument = true;
  } else {
    dim = dim.trim();
    if (dim.empty() || dim.getAsInteger(10, spec.dim))
      return malformed(text, "'" + dim + "' is not a dimension number");
  }
  spec.argument = argument.str();
  llvm::StringRef symbol = rest;
  llvm::StringRef range;
  if (size_t open = rest.find('['); open != llvm::StringRef::npos) {
    symbol = rest.take_front(open);
    range = rest.drop_front(open);
    if (!range.ends_with("]"))
      return malformed(text, "the range does not end with ']'");
    range = range.drop_front().drop_back();
  }
  symbol = symbol.trim();
  if (!isIdentifier(symbol))
    return malformed(text, "'" + symbol + "' is not a symbol name");
  // The graph's text names the symbol among its own words.
  if (ir::isReservedWord(symbol))
    return malformed(text, "'" + symbol +
                               "' is a word of the graph IR (a dtype, device, layout, memory "
                               "format, literal or operator); name the symbol otherwise");
  spec.symbol = symbol.str();
  if (!range.empty() || rest.contains('[')) {
    auto [lo, hi] = range.split(',');
    if (!range.contains(','))
      return malformed(text, "the range needs two bounds separated by ','");
    llvm::Expected<std::optional<int64_t>> low = parseBound(text, lo);
    if (!low)
      return low.takeError();
    llvm::Expected<std::optional<int64_t>> high = parseBound(text, hi);
    if (!high)
      return high.takeError();
    spec.range.lo = *low;
    spec.range.hi = *high;
    if (spec.range.lo && spec.range.hi && *spec.range.lo > *spec.range.hi)
      return malformed(text, "the range is empty");
  }
  // An int symbol is a size (torch.export's Dim for an int input): it
  // serves shapes, so its range cannot reach below 0.
  if (spec.intArgument && spec.range.lo && *spec.range.lo < 0)
    return malformed(text, "a symbolic int is a size, so its range starts at 0 or above");
  return spec;
}

ir::SourcePtr sourceOf(const DynamicSpec& spec, const ir::SourcePtr& argument) {
  if (spec.path.empty())
    return argument;
  // The path was checked when parsed: read its steps off a parse rooted at
  // a placeholder local, then apply them to the argument's real source.
  llvm::Expected<ir::SourcePtr> parsed = ir::Source::parse("L['x']" + spec.path);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return nullptr;
  }
  std::vector<const ir::Source*> steps;
  for (const ir::Source* step = parsed->get(); step->base(); step = step->base().get())
    steps.push_back(step);
  ir::SourcePtr source = argument;
  for (const ir::Source* step : llvm::reverse(steps)) {
    if (step->kind() == ir::Source::Kind::Attr)
      source = ir::Source::attr(source, step->name());
    else if (step->kind() == ir::Source::Kind::Item && !step->typedKey())
      source = ir::Source::item(source, step->itemKey());
    else
      return nullptr;
  }
  return source;
}

llvm::Error checkDynamicSpecs(llvm::ArrayRef<DynamicSpec> specs) {
  auto rangeText = [](const DynamicSpec& spec) {
    if (!spec.range.lo && !spec.range.hi)
      return std::string("no range");
    std::string text;
    llvm::raw_string_ostream os(text);
    spec.range.print(os);
    return text;
  };
  for (size_t i = 0; i < specs.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const DynamicSpec& first = specs[j];
      const DynamicSpec& second = specs[i];
      if (first.argument == second.argument) {
        // Ints inside one argument are told apart by their paths; the
        // argument itself cannot be declared beside them.
        if (!first.path.empty() || !second.path.empty()) {
          if (first.path == second.path)
            return llvm::createStringError(
                "--dynamic '" + second.text + "' names '" + second.argument + second.path +
                "' again, after --dynamic '" + first.text + "'; declare each int once");
          if (first.path.empty() || second.path.empty())
            return llvm::createStringError(
                "--dynamic '" + first.text + "' and --dynamic '" + second.text + "' name '" +
                second.argument + "' both as " +
                ((first.path.empty() ? first : second).intArgument ? "an int" : "a tensor") +
                " and as an object or container holding an int");
        } else if (first.intArgument || second.intArgument) {
          return llvm::createStringError(
              "--dynamic '" + second.text + "' names '" + second.argument + "' again, after " +
              "--dynamic '" + first.text + "'; an int argument is declared once, and an " +
              "argument is an int (ARG=SYMBOL) or a tensor (ARG:DIM=SYMBOL), not both");
        } else if (first.dim == second.dim) {
          return llvm::createStringError("--dynamic '" + second.text + "' declares dimension " +
                                         llvm::Twine(second.dim) + " of '" + second.argument +
                                         "' again, after --dynamic '" + first.text +
                                         "'; declare each dimension once");
        }
      }
      if (first.symbol == second.symbol &&
          (first.range.lo != second.range.lo || first.range.hi != second.range.hi))
        return llvm::createStringError(
            "--dynamic '" + first.text + "' and --dynamic '" + second.text + "' give symbol " +
            first.symbol + " different ranges (" + rangeText(first) + " and " + rangeText(second) +
            "); a symbol is one size with one range: write the same range on both, or name "
            "two symbols");
    }
  return llvm::Error::success();
}

} // namespace dync::capture
