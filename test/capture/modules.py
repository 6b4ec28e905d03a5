# Model code beyond the examples: a dataclass config read through self, a
# property, a method decorated with @torch.no_grad(), torch.finfo, map over
# a lambda, star-unpacking a shape, a buffer, and an int returned beside a
# tensor, with the sequence length dynamic.
# RUN: %dync export %S/Inputs/attention.py:model.forward --emit=graph \
# RUN:   --dynamic 'x:1=n[2,128]' | FileCheck %s
# RUN: %dync export %S/Inputs/attention.py:model.forward --emit=guards | FileCheck %s --check-prefix=GUARDS

# CHECK:      graph @model.forward(%x: tensor<f32, [2, n, 32]> = L['x'],
# CHECK-NEXT: %[[W:[a-z_]+]]: tensor<f32, [96, 32], requires_grad> = L['self'].qkv.weight,
# CHECK-NEXT: %[[SCALE:[a-z_]+]]: tensor<f32, []> = L['self'].scale)
# CHECK-NEXT: symbols { n: [2, 128] } {
# CHECK:      aten::mul.Tensor({{.*}}, %[[SCALE]])
# CHECK:      aten::arange.start_step(0, n,
# CHECK:      aten::scalar_tensor.default(-3.4028234663852886e+38, dtype=f32
# CHECK:      aten::where.self
# CHECK:      return (%{{[0-9]+}}, n)

# GUARDS: TYPE_MATCH L['self'] attention.Attn
# GUARDS: TYPE_MATCH L['self'].cfg attention.Config
# GUARDS: EQUALS_MATCH L['self'].cfg.dim 32
# GUARDS: EQUALS_MATCH L['self'].cfg.heads 4
# GUARDS: EQUALS_MATCH L['self'].cfg.causal True
