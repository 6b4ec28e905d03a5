# dync inspect prints an artifact's manifest only if the file is, byte for
# byte, what export wrote: a changed byte or a file cut short is one error
# naming the file and the reason, exit status 1. -o never replaces a file
# that is not an artifact, and never shadows a module of its folder.
# RUN: rm -rf %t && mkdir -p %t && cp %s %t/model.py
# RUN: %dync export %t/model.py:f -o %t/model.dync.so
# RUN: %dync inspect %t/model.dync.so | FileCheck %s --check-prefix=INSPECT
# RUN: %python -c "data = open('%t/model.dync.so', 'rb').read(); \
# RUN:   at = data.index(b'guards @'); \
# RUN:   open('%t/changed.dync.so', 'wb').write(data[:at] + b'G' + data[at + 1:]); \
# RUN:   open('%t/cut.dync.so', 'wb').write(data[:-1]); \
# RUN:   open('%t/half.dync.so', 'wb').write(data[:len(data) // 2])"
# RUN: %python %S/Inputs/exitcode.py %dync inspect %t/changed.dync.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=CHANGED
# RUN: %python %S/Inputs/exitcode.py %dync inspect %t/cut.dync.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=CUT
# RUN: %python %S/Inputs/exitcode.py %dync inspect %t/half.dync.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=HALF
#
# RUN: cp %t/model.py %t/model.py.orig
# RUN: %python %S/Inputs/exitcode.py %dync export %t/model.py:f -o %t/model.py 2>&1 \
# RUN:   | FileCheck %s --check-prefix=SOURCE
# RUN: cmp %t/model.py %t/model.py.orig
# RUN: %python %S/Inputs/exitcode.py %dync export %t/model.py:f -o %t/model.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=SHADOW
# RUN: not ls %t/model.so
# An earlier artifact, even a damaged one, is replaced.
# RUN: %dync export %t/model.py:f -o %t/changed.dync.so
# RUN: %dync inspect %t/changed.dync.so | FileCheck %s --check-prefix=INSPECT
import torch


def f(x):
    return torch.relu(x) + 1


def example_inputs():
    return (torch.randn(4, 3),)

# INSPECT: # dync artifact
# INSPECT-NEXT: format_version 2
# INSPECT: guards @f(

# CHANGED: dync: error: {{.*}}changed.dync.so: corrupt artifact: its bytes do not match the SHA-256 sealed into it at export (the file was changed or damaged since); export it again
# CHANGED-NEXT: exit code: 1

# CUT: dync: error: {{.*}}cut.dync.so: corrupt artifact: the seal that ends every artifact is missing (the file was truncated, or something was appended to it); export it again
# CUT-NEXT: exit code: 1

# HALF: dync: error: {{.*}}half.dync.so: truncated or damaged ELF file, not a whole dync artifact: section header table goes past the end of the file
# HALF-NEXT: exit code: 1

# SOURCE: dync: error: refusing to overwrite '{{.*}}model.py': it is not a dync artifact (-o replaces only an artifact an earlier export wrote); choose another output name, or remove the file first
# SOURCE-NEXT: exit code: 1

# SHADOW: dync: error: -o '{{.*}}model.so' would shadow the module '{{.*}}model.py': Python imports 'model.so' first, so 'import model' from that folder would load the artifact as a broken extension module; name it '{{.*}}model.dync.so' instead (a dotted name no import reaches)
# SHADOW-NEXT: exit code: 1
