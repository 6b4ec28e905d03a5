"""nnU-Net v1's `Generic_UNet` in 3-D (MIC-DKFZ/nnUNet): layers built
from op classes and kwargs dicts (`conv_op=nn.Conv3d`, `norm_op_kwargs =
{'eps': 1e-5, 'affine': True}`, `dropout_op_kwargs`, `nonlin_kwargs =
{'negative_slope': 1e-2, 'inplace': True}`) that are deep-copied and
edited per stage (`conv_kwargs['padding']` from the kernel size), a
`ConvDropoutNormNonlin` whose dropout is created only when `p > 0`,
`StackedConvLayers` taking `first_stride`, anisotropic pooling and kernel
sizes per stage (`pool_op_kernel_sizes`, `conv_kernel_sizes` lists),
`ConvTranspose3d` upsampling with the pooling kernel as stride, skips by
`torch.cat((x, skips[-(u + 1)]), dim=1)`, deep supervision heads in
`seg_outputs` with `upscale_logits_ops` of `lambda x: x` (an `Identity`
class), the `final_nonlin` softmax helper `softmax_helper`, and the
forward returning `tuple([seg_outputs[-1]] + [i(j) for i, j in
zip(list(self.upscale_logits_ops)[::-1], seg_outputs[:-1][::-1])])` when
`self._deep_supervision and self.do_ds`; weights by an `InitWeights_He`
callable passed to `self.apply`."""
from copy import deepcopy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def softmax_helper(x):
    return F.softmax(x, 1)


class InitWeights_He(object):
    def __init__(self, neg_slope=1e-2):
        self.neg_slope = neg_slope

    def __call__(self, module):
        if isinstance(module, nn.Conv3d) or isinstance(module, nn.Conv2d) or isinstance(module, nn.ConvTranspose2d) \
                or isinstance(module, nn.ConvTranspose3d):
            module.weight = nn.init.kaiming_normal_(module.weight, a=self.neg_slope)
            if module.bias is not None:
                module.bias = nn.init.constant_(module.bias, 0)


class Identity(nn.Module):
    def forward(self, x):
        return x


class ConvDropoutNormNonlin(nn.Module):
    def __init__(self, input_channels, output_channels, conv_op=nn.Conv2d, conv_kwargs=None,
                 norm_op=nn.BatchNorm2d, norm_op_kwargs=None, dropout_op=nn.Dropout2d, dropout_op_kwargs=None,
                 nonlin=nn.LeakyReLU, nonlin_kwargs=None):
        super(ConvDropoutNormNonlin, self).__init__()
        if nonlin_kwargs is None:
            nonlin_kwargs = {"negative_slope": 1e-2, "inplace": True}
        if dropout_op_kwargs is None:
            dropout_op_kwargs = {"p": 0.5, "inplace": True}
        if norm_op_kwargs is None:
            norm_op_kwargs = {"eps": 1e-5, "affine": True, "momentum": 0.1}
        if conv_kwargs is None:
            conv_kwargs = {"kernel_size": 3, "stride": 1, "padding": 1, "dilation": 1, "bias": True}
        self.nonlin_kwargs = nonlin_kwargs
        self.nonlin = nonlin
        self.dropout_op = dropout_op
        self.dropout_op_kwargs = dropout_op_kwargs
        self.norm_op_kwargs = norm_op_kwargs
        self.conv_kwargs = conv_kwargs
        self.conv_op = conv_op
        self.norm_op = norm_op
        self.conv = self.conv_op(input_channels, output_channels, **self.conv_kwargs)
        if self.dropout_op is not None and self.dropout_op_kwargs["p"] is not None and self.dropout_op_kwargs[
                "p"] > 0:
            self.dropout = self.dropout_op(**self.dropout_op_kwargs)
        else:
            self.dropout = None
        self.instnorm = self.norm_op(output_channels, **self.norm_op_kwargs)
        self.lrelu = self.nonlin(**self.nonlin_kwargs)

    def forward(self, x):
        x = self.conv(x)
        if self.dropout is not None:
            x = self.dropout(x)
        return self.lrelu(self.instnorm(x))


class StackedConvLayers(nn.Module):
    def __init__(self, input_feature_channels, output_feature_channels, num_convs, conv_op=nn.Conv2d,
                 conv_kwargs=None, norm_op=nn.BatchNorm2d, norm_op_kwargs=None, dropout_op=nn.Dropout2d,
                 dropout_op_kwargs=None, nonlin=nn.LeakyReLU, nonlin_kwargs=None, first_stride=None,
                 basic_block=ConvDropoutNormNonlin):
        self.input_channels = input_feature_channels
        self.output_channels = output_feature_channels
        self.conv_kwargs = conv_kwargs
        super(StackedConvLayers, self).__init__()
        if first_stride is not None:
            self.conv_kwargs_first_conv = deepcopy(conv_kwargs)
            self.conv_kwargs_first_conv["stride"] = first_stride
        else:
            self.conv_kwargs_first_conv = conv_kwargs
        self.blocks = nn.Sequential(
            *([basic_block(input_feature_channels, output_feature_channels, conv_op, self.conv_kwargs_first_conv,
                           norm_op, norm_op_kwargs, dropout_op, dropout_op_kwargs, nonlin, nonlin_kwargs)] +
              [basic_block(output_feature_channels, output_feature_channels, conv_op, self.conv_kwargs, norm_op,
                           norm_op_kwargs, dropout_op, dropout_op_kwargs, nonlin, nonlin_kwargs)
               for _ in range(num_convs - 1)]))

    def forward(self, x):
        return self.blocks(x)


class Generic_UNet(nn.Module):
    def __init__(self, input_channels, base_num_features, num_classes, num_pool, num_conv_per_stage=2,
                 feat_map_mul_on_downscale=2, conv_op=nn.Conv2d, norm_op=nn.BatchNorm2d, norm_op_kwargs=None,
                 dropout_op=nn.Dropout2d, dropout_op_kwargs=None, nonlin=nn.LeakyReLU, nonlin_kwargs=None,
                 deep_supervision=True, dropout_in_localization=False, final_nonlin=softmax_helper,
                 weightInitializer=InitWeights_He(1e-2), pool_op_kernel_sizes=None, conv_kernel_sizes=None,
                 upscale_logits=False, convolutional_pooling=True, max_num_features=None):
        super(Generic_UNet, self).__init__()
        self.convolutional_upsampling = True
        self.convolutional_pooling = convolutional_pooling
        self.upscale_logits = upscale_logits
        if nonlin_kwargs is None:
            nonlin_kwargs = {"negative_slope": 1e-2, "inplace": True}
        if dropout_op_kwargs is None:
            dropout_op_kwargs = {"p": 0.5, "inplace": True}
        if norm_op_kwargs is None:
            norm_op_kwargs = {"eps": 1e-5, "affine": True, "momentum": 0.1}
        self.conv_kwargs = {"stride": 1, "dilation": 1, "bias": True}
        self.nonlin = nonlin
        self.nonlin_kwargs = nonlin_kwargs
        self.dropout_op_kwargs = dropout_op_kwargs
        self.norm_op_kwargs = norm_op_kwargs
        self.weightInitializer = weightInitializer
        self.conv_op = conv_op
        self.norm_op = norm_op
        self.dropout_op = dropout_op
        self.num_classes = num_classes
        self.final_nonlin = final_nonlin
        self._deep_supervision = deep_supervision
        self.do_ds = deep_supervision
        if conv_op == nn.Conv3d:
            upsample_mode = "trilinear"
            transpconv = nn.ConvTranspose3d
            if pool_op_kernel_sizes is None:
                pool_op_kernel_sizes = [(2, 2, 2)] * num_pool
            if conv_kernel_sizes is None:
                conv_kernel_sizes = [(3, 3, 3)] * (num_pool + 1)
        else:
            raise ValueError("unknown convolution dimensionality, conv op: %s" % str(conv_op))
        self.input_shape_must_be_divisible_by = np.prod(pool_op_kernel_sizes, 0, dtype=np.int64)
        self.pool_op_kernel_sizes = pool_op_kernel_sizes
        self.conv_kernel_sizes = conv_kernel_sizes
        self.conv_pad_sizes = []
        for krnl in self.conv_kernel_sizes:
            self.conv_pad_sizes.append([1 if i == 3 else 0 for i in krnl])
        if max_num_features is None:
            max_num_features = 320
        self.conv_blocks_localization = []
        self.conv_blocks_context = []
        self.tu = []
        self.seg_outputs = []
        output_features = base_num_features
        input_features = input_channels
        for d in range(num_pool):
            first_stride = self.pool_op_kernel_sizes[d - 1] if d != 0 and self.convolutional_pooling else None
            self.conv_kwargs["kernel_size"] = self.conv_kernel_sizes[d]
            self.conv_kwargs["padding"] = self.conv_pad_sizes[d]
            self.conv_blocks_context.append(StackedConvLayers(
                input_features, output_features, num_conv_per_stage, self.conv_op, self.conv_kwargs, self.norm_op,
                self.norm_op_kwargs, self.dropout_op, self.dropout_op_kwargs, self.nonlin, self.nonlin_kwargs,
                first_stride))
            input_features = output_features
            output_features = int(np.round(output_features * feat_map_mul_on_downscale))
            output_features = min(output_features, max_num_features)
        first_stride = self.pool_op_kernel_sizes[-1] if self.convolutional_pooling else None
        final_num_features = output_features
        self.conv_kwargs["kernel_size"] = self.conv_kernel_sizes[num_pool]
        self.conv_kwargs["padding"] = self.conv_pad_sizes[num_pool]
        self.conv_blocks_context.append(nn.Sequential(
            StackedConvLayers(input_features, output_features, num_conv_per_stage - 1, self.conv_op,
                              self.conv_kwargs, self.norm_op, self.norm_op_kwargs, self.dropout_op,
                              self.dropout_op_kwargs, self.nonlin, self.nonlin_kwargs, first_stride),
            StackedConvLayers(output_features, final_num_features, 1, self.conv_op, self.conv_kwargs, self.norm_op,
                              self.norm_op_kwargs, self.dropout_op, self.dropout_op_kwargs, self.nonlin,
                              self.nonlin_kwargs)))
        if not dropout_in_localization:
            old_dropout_p = self.dropout_op_kwargs["p"]
            self.dropout_op_kwargs["p"] = 0.0
        for u in range(num_pool):
            nfeatures_from_down = final_num_features
            nfeatures_from_skip = self.conv_blocks_context[-(2 + u)].output_channels
            n_features_after_tu_and_concat = nfeatures_from_skip * 2
            if u != num_pool - 1 and not self.convolutional_upsampling:
                final_num_features = self.conv_blocks_context[-(3 + u)].output_channels
            else:
                final_num_features = nfeatures_from_skip
            self.tu.append(transpconv(nfeatures_from_down, nfeatures_from_skip, pool_op_kernel_sizes[-(u + 1)],
                                      pool_op_kernel_sizes[-(u + 1)], bias=False))
            self.conv_kwargs["kernel_size"] = self.conv_kernel_sizes[-(u + 1)]
            self.conv_kwargs["padding"] = self.conv_pad_sizes[-(u + 1)]
            self.conv_blocks_localization.append(nn.Sequential(
                StackedConvLayers(n_features_after_tu_and_concat, nfeatures_from_skip, num_conv_per_stage - 1,
                                  self.conv_op, self.conv_kwargs, self.norm_op, self.norm_op_kwargs,
                                  self.dropout_op, self.dropout_op_kwargs, self.nonlin, self.nonlin_kwargs),
                StackedConvLayers(nfeatures_from_skip, final_num_features, 1, self.conv_op, self.conv_kwargs,
                                  self.norm_op, self.norm_op_kwargs, self.dropout_op, self.dropout_op_kwargs,
                                  self.nonlin, self.nonlin_kwargs)))
        for ds in range(len(self.conv_blocks_localization)):
            self.seg_outputs.append(conv_op(self.conv_blocks_localization[ds][-1].output_channels, num_classes,
                                            1, 1, 0, 1, 1, False))
        self.upscale_logits_ops = []
        cum_upsample = np.cumprod(np.vstack(pool_op_kernel_sizes), axis=0)[::-1]
        for usl in range(num_pool - 1):
            if self.upscale_logits:
                self.upscale_logits_ops.append(nn.Upsample(scale_factor=tuple([int(i) for i in cum_upsample[usl + 1]]),
                                                           mode=upsample_mode))
            else:
                self.upscale_logits_ops.append(Identity())
        if not dropout_in_localization:
            self.dropout_op_kwargs["p"] = old_dropout_p
        self.conv_blocks_localization = nn.ModuleList(self.conv_blocks_localization)
        self.conv_blocks_context = nn.ModuleList(self.conv_blocks_context)
        self.tu = nn.ModuleList(self.tu)
        self.seg_outputs = nn.ModuleList(self.seg_outputs)
        if self.upscale_logits:
            self.upscale_logits_ops = nn.ModuleList(self.upscale_logits_ops)
        if self.weightInitializer is not None:
            self.apply(self.weightInitializer)

    def forward(self, x):
        skips = []
        seg_outputs = []
        for d in range(len(self.conv_blocks_context) - 1):
            x = self.conv_blocks_context[d](x)
            skips.append(x)
        x = self.conv_blocks_context[-1](x)
        for u in range(len(self.tu)):
            x = self.tu[u](x)
            x = torch.cat((x, skips[-(u + 1)]), dim=1)
            x = self.conv_blocks_localization[u](x)
            seg_outputs.append(self.final_nonlin(self.seg_outputs[u](x)))
        if self._deep_supervision and self.do_ds:
            return tuple([seg_outputs[-1]] + [i(j) for i, j in zip(list(self.upscale_logits_ops)[::-1],
                                                                   seg_outputs[:-1][::-1])])
        else:
            return seg_outputs[-1]


torch.manual_seed(0)
model = Generic_UNet(1, 4, 3, num_pool=3, conv_op=nn.Conv3d, norm_op=nn.InstanceNorm3d,
                     dropout_op=nn.Dropout3d, pool_op_kernel_sizes=[[1, 2, 2], [2, 2, 2], [2, 2, 2]],
                     conv_kernel_sizes=[[1, 3, 3], [3, 3, 3], [3, 3, 3], [3, 3, 3]], upscale_logits=False,
                     deep_supervision=True).eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(1, 1, 8, 16, 16, generator=g),)
