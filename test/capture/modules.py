# Model code beyond the examples: a dataclass config read through self, a
# property, a method decorated with @torch.no_grad(), torch.finfo, map over
# a lambda, star-unpacking a shape, a buffer, and an int returned beside a
# tensor, with the sequence length dynamic.
# RUN: %dync export %S/Inputs/attention.py:model.forward --emit=graph \
# RUN:   --dynamic 'x:1=n[2,128]' | FileCheck %s
# RUN: %dync export %S/Inputs/attention.py:model.forward --emit=guards | FileCheck %s --check-prefix=GUARDS

# CHECK:      graph @model.forward(%x: tensor<f32, [2, n, 32]> = L['x'],
# CHECK-NEXT: %self_qkv_weight: tensor<f32, [96, 32], requires_grad> = L['self']._modules['qkv']._parameters['weight'],
# CHECK-NEXT: %[[SCALE:self_scale]]: tensor<f32, []> = L['self']._buffers['scale'])
# CHECK-NEXT: symbols { n: [2, 128] } {
# CHECK:      aten::mul.Tensor({{.*}}, %[[SCALE]])
# CHECK:      aten::arange.start_step(0, n,
# CHECK:      aten::scalar_tensor.default(-3.4028234663852886e+38, dtype=f32
# CHECK:      aten::where.self
# CHECK:      return (%{{[0-9]+}}, n)

# The buffer is read from `_buffers`, the config from the instance dict and
# its fields from the dataclass instance's dict; the property runs.
# GUARDS:      tensor L['self']._buffers['scale'] : tensor<f32, []>
# GUARDS:      type L['self'] : attention:Attn
# GUARDS:      none L['self']._modules['qkv']._parameters['bias']
# GUARDS-NEXT: type L['self'].cfg : attention:Config
# GUARDS-NEXT: equals L['self'].cfg.dim : 32
# GUARDS-NEXT: equals L['self'].cfg.heads : 4
# GUARDS-NEXT: function type(L['self']).head_dim.fget : attention:Attn.head_dim line {{[0-9]+}}
# GUARDS-NEXT: equals L['self'].cfg.causal : true
