"""`dync inspect --emit=bytecode` prints what CPython's own `dis.dis` prints,
for code that exercises every part of the listing: line numbers, jump
targets, EXTENDED_ARG, exception tables, nested code objects."""
import dis
import importlib.util
import io
import os
import re
import sysconfig
import textwrap

import pytest

# Functions written to reach the corners of the listing format.
CORPUS_TEMPLATE = textwrap.dedent('''
    import contextlib

    def straight(a, b=2, *args, c, **kwargs):
        return a + b * c - len(args) + len(kwargs)

    def loops(n):
        total = 0
        for i in range(n):
            if i % 3 == 0:
                continue
            while total > 100:
                total //= 2
                if total == 7:
                    break
            else:
                total += i
        return total

    def handlers(path):
        try:
            f = open(path)
        except (OSError, ValueError) as error:
            print(error)
            raise
        else:
            return f.read()
        finally:
            print("done")

    def managed(lock, items):
        with lock, contextlib.suppress(KeyError):
            return [x * 2 for x in items if x], {k: v for k, v in items}, {x for x in items}

    def closures(x):
        y = x + 1
        def inner(z):
            nonlocal y
            y += z
            return lambda w: w + x + y
        return inner

    def generator(n):
        for i in range(n):
            received = yield i
            if received:
                yield from range(received)

    async def coroutine(session, urls):
        async with session:
            async for chunk in session.stream(urls):
                await chunk.close()
        return [await u async for u in urls]

    def formatting(value, width):
        return f"{value!r:>{width}} {value!s} {value!a} {value}"

    def comparisons(a, b):
        return a < b, a is b, a in b, a is not b, a not in b, a == b, not a

    def unpacking(seq):
        first, *rest = seq
        a, (b, c) = rest[0], rest[1:3]
        return first, a, b, c, {**{"k": a}}, [*seq]

    def many_constants():
        return [MANY_CONSTANTS]

    def long_jump(x):
        if x:
            LONG_BODY
        return x

    class Outer:
        class Inner:
            def method(self, value=None):
                return super().__repr__() if value is None else value
''')
# Enough constants and code to need EXTENDED_ARG for arguments and jumps.
CORPUS = CORPUS_TEMPLATE.replace("MANY_CONSTANTS", ", ".join(f"{i}.5" for i in range(300))).replace(
    "LONG_BODY", "\n        ".join(f"x = x + {i}" for i in range(200)))

CORPUS_ENTRIES = ["straight", "loops", "handlers", "managed", "closures", "generator",
                  "coroutine", "formatting", "comparisons", "unpacking", "many_constants",
                  "long_jump", "Outer.Inner.method"]

# Real code nobody here wrote: standalone standard library modules.
STDLIB = sysconfig.get_paths()["stdlib"]
STDLIB_ENTRIES = [
    ("argparse.py", "ArgumentParser._parse_known_args"),
    ("dis.py", "_get_instructions_bytes"),
    ("difflib.py", "SequenceMatcher.get_opcodes"),
    ("textwrap.py", "TextWrapper._wrap_chunks"),
    ("fractions.py", "Fraction.__new__"),
    ("functools.py", "lru_cache"),
]

# The models in examples/, as a user would name their entries.
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "examples")
EXAMPLE_ENTRIES = [
    ("mlp/model.py", "MLP.forward"),
    ("cnn/model.py", "CNN.forward"),
    ("cnn/model.py", "model.forward"),
    ("transformer/model.py", "SelfAttention.forward"),
    ("transformer/model.py", "EncoderBlock.forward"),
]


def load_by_path(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def without_addresses(text):
    """Code object reprs carry a memory address, which differs between the two
    processes; everything else must match."""
    return re.sub(r" at 0x[0-9a-f]+,", " at 0x?,", text)


def dis_text(path, qualname):
    target = load_by_path(path)
    for part in qualname.split("."):
        target = getattr(target, part)
    out = io.StringIO()
    dis.dis(target, file=out)
    return without_addresses(out.getvalue())


def listing(run_dync, path, qualname):
    result = run_dync("inspect", f"{path}:{qualname}", "--emit=bytecode")
    assert result.returncode == 0, result.stderr
    # Lines starting with '#' are dync's own header, not part of the listing.
    return without_addresses("".join(line for line in result.stdout.splitlines(keepends=True)
                                     if not line.startswith("#")))


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.py"
    path.write_text(CORPUS)
    return str(path)


@pytest.mark.parametrize("qualname", CORPUS_ENTRIES)
def test_corpus_listing_equals_dis(run_dync, corpus_file, qualname):
    assert listing(run_dync, corpus_file, qualname) == dis_text(corpus_file, qualname)


@pytest.mark.parametrize("filename,qualname", STDLIB_ENTRIES)
def test_stdlib_listing_equals_dis(run_dync, filename, qualname):
    path = os.path.join(STDLIB, filename)
    assert listing(run_dync, path, qualname) == dis_text(path, qualname)


def test_corpus_reaches_the_corners(corpus_file):
    """The corpus is only a good yardstick if it has what it claims to have."""
    text = "".join(dis_text(corpus_file, q) for q in CORPUS_ENTRIES)
    for feature in ["EXTENDED_ARG", "ExceptionTable:", "Disassembly of", ">>", "lasti",
                    "JUMP_BACKWARD", "with format", "NULL + "]:
        assert feature in text, feature


@pytest.mark.parametrize("filename,qualname", EXAMPLE_ENTRIES)
def test_example_listing_equals_dis(run_dync, filename, qualname):
    path = os.path.join(EXAMPLES, filename)
    assert listing(run_dync, path, qualname) == dis_text(path, qualname)
