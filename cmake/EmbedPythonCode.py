"""Writes a C++ fragment with the frontend's Python sources compiled to code.

    python3 EmbedPythonCode.py OUTPUT SOURCE...

One {module name, marshalled code object, size} entry per SOURCE, compiled as
the embedded modules' finder compiles them at run time (the same "<dync ...>"
file name, no inherited flags, no optimization), and the bytecode's magic
number: the frontend unmarshals an entry instead of compiling its source only
when the running interpreter's magic number is this one (EmbeddedModules.cpp).
Run by the build with the Python dync embeds.
"""
import importlib.util
import marshal
import os
import sys


def literal(data):
    """A C++ string literal of `data`, every byte a three-digit octal escape
    (unambiguous whatever follows it), split into lines of adjacent literals."""
    lines = []
    for start in range(0, len(data), 32):
        lines.append('"' + "".join(f"\\{byte:03o}" for byte in data[start:start + 32]) + '"')
    return "\n".join(lines) or '""'


def main():
    output, sources = sys.argv[1], sys.argv[2:]
    parts = ["// Generated from the frontend's Python sources; do not edit.\n",
             f"#define DYNC_EMBEDDED_CODE_MAGIC "
             f"{int.from_bytes(importlib.util.MAGIC_NUMBER, 'little')}L\n"]
    for source in sources:
        module = "dync_" + os.path.splitext(os.path.basename(source))[0]
        with open(source, encoding="utf-8") as f:
            text = f.read()
        code = compile(text, f"<dync {module}>", "exec", dont_inherit=True, optimize=0)
        data = marshal.dumps(code)
        parts.append(f'{{"{module}",\n{literal(data)},\n{len(data)}}},\n')
    content = "".join(parts)
    # Rewritten only when it changes, so that an unchanged build stays built.
    if os.path.exists(output):
        with open(output, encoding="utf-8") as f:
            if f.read() == content:
                return
    with open(output + ".tmp", "w", encoding="utf-8") as f:
        f.write(content)
    os.replace(output + ".tmp", output)


if __name__ == "__main__":
    main()
