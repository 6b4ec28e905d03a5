"""Hand-written `torch.autograd.Function`s as training code keeps them:
EfficientNet-PyTorch's `SwishImplementation` (`ctx.save_for_backward(i)`,
the sigmoid recomputed in backward to save memory), the PyTorch docs'
`LinearFunction` whose backward computes only what `ctx.needs_input_grad`
asks for and returns None for a missing bias, XNOR-Net's `BinActive`
sign with a hard-tanh straight-through gradient zeroed in place by
`grad_input[input.ge(1)] = 0`, a top-k pooling Function returning
values and indices with `ctx.mark_non_differentiable(indices)` and
`ctx.set_materialize_grads(False)` (backward tests `grad is None`), and a
`@once_differentiable` scaled-tanh with its saved output; the Functions'
`apply` called from modules, the indices used downstream by gather."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable


class SwishImplementation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i * torch.sigmoid(i)
        ctx.save_for_backward(i)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        i = ctx.saved_tensors[0]
        sigmoid_i = torch.sigmoid(i)
        return grad_output * (sigmoid_i * (1 + i * (1 - sigmoid_i)))


class MemoryEfficientSwish(nn.Module):
    def forward(self, x):
        return SwishImplementation.apply(x)


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class CustomLinear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(output_features, input_features).uniform_(-0.1, 0.1))
        if bias:
            self.bias = nn.Parameter(torch.empty(output_features).uniform_(-0.1, 0.1))
        else:
            self.register_parameter("bias", None)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)


class BinActive(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input.ge(1)] = 0
        grad_input[input.le(-1)] = 0
        return grad_input


class TopKPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.set_materialize_grads(False)
        values, indices = x.topk(k, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.input_shape = x.shape
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        if grad_values is None:
            return None, None
        (indices,) = ctx.saved_tensors
        grad = grad_values.new_zeros(ctx.input_shape)
        return grad.scatter(-1, indices, grad_values), None


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = torch.tanh(x) * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * (ctx.scale - y * y / ctx.scale), None


class BinConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.bn = nn.BatchNorm2d(cin, eps=1e-4, momentum=0.1, affine=True)
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)

    def forward(self, x):
        x = self.bn(x)
        x = BinActive.apply(x)
        return F.relu(self.conv(x))


class CustomFunctionNet(nn.Module):
    def __init__(self, cin=3, dim=16, classes=5, k=4):
        super().__init__()
        self.stem = nn.Conv2d(cin, dim, 3, padding=1)
        self.swish = MemoryEfficientSwish()
        self.block = BinConvBlock(dim, dim)
        self.fc1 = CustomLinear(dim * 4, 32)
        self.fc2 = CustomLinear(32, classes, bias=False)
        self.k = k

    def forward(self, x, target):
        x = self.swish(self.stem(x))
        x = self.block(x)
        flat = x.flatten(2)
        values, indices = TopKPool.apply(flat, self.k)
        peak_positions = torch.gather(torch.arange(flat.size(-1)).expand_as(flat), -1, indices)
        h = ScaledTanh.apply(self.fc1(values.flatten(1)), 1.7159)
        logits = self.fc2(h)
        loss = F.cross_entropy(logits, target)
        return loss, logits, peak_positions


torch.manual_seed(0)
model = CustomFunctionNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(4, 3, 8, 8, generator=g), torch.tensor([0, 3, 1, 4])
