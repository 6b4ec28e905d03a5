"""PWC-Net as sniklaus/pytorch-pwc writes it (no CUDA correlation
kernel): a module-level `backwarp_tenGrid = {}` cache keyed by
`str(tenFlow.shape)`, filled on a miss with linspace grids built by
`.view(...).repeat(...)` and read back in `backwarp`, the flow rescaled to
[-1, 1] by `(W - 1.0) / 2.0`, a ones channel warped alongside to build the
validity mask `tenMask > 0.999`; the cost volume of the correlation layer
in plain torch by a Python double loop over displacements of an
`F.pad`-ed second feature map, each slice multiplied and averaged, stacked
and divided; per-level `Decoder`s chosen with a class-level dict
`{2: ..., 3: ...}[intLevel]` of channel counts, the previous level's flow
and features upsampled by ConvTranspose2d and scaled by a `fltBackwarp`
factor, dense-net style `torch.cat([..., tenFeat], 1)` chains, and a
context `Refiner` of dilated convs; the forward resizes the inputs to
multiples of 64 by bilinear interpolation and rescales the flow back."""
import math

import torch
import torch.nn.functional as F

backwarp_tenGrid = {}
backwarp_tenPartial = {}


def backwarp(tenInput, tenFlow):
    if str(tenFlow.shape) not in backwarp_tenGrid:
        tenHor = torch.linspace(-1.0 + (1.0 / tenFlow.shape[3]), 1.0 - (1.0 / tenFlow.shape[3]),
                                tenFlow.shape[3]).view(1, 1, 1, -1).repeat(1, 1, tenFlow.shape[2], 1)
        tenVer = torch.linspace(-1.0 + (1.0 / tenFlow.shape[2]), 1.0 - (1.0 / tenFlow.shape[2]),
                                tenFlow.shape[2]).view(1, 1, -1, 1).repeat(1, 1, 1, tenFlow.shape[3])
        backwarp_tenGrid[str(tenFlow.shape)] = torch.cat([tenHor, tenVer], 1)
    if str(tenFlow.shape) not in backwarp_tenPartial:
        backwarp_tenPartial[str(tenFlow.shape)] = tenFlow.new_ones([tenFlow.shape[0], 1, tenFlow.shape[2],
                                                                    tenFlow.shape[3]])
    tenFlow = torch.cat([tenFlow[:, 0:1, :, :] / ((tenInput.shape[3] - 1.0) / 2.0),
                         tenFlow[:, 1:2, :, :] / ((tenInput.shape[2] - 1.0) / 2.0)], 1)
    tenInput = torch.cat([tenInput, backwarp_tenPartial[str(tenFlow.shape)]], 1)
    tenOutput = F.grid_sample(input=tenInput, grid=(backwarp_tenGrid[str(tenFlow.shape)] + tenFlow).permute(
        0, 2, 3, 1), mode="bilinear", padding_mode="zeros", align_corners=False)
    tenMask = tenOutput[:, -1:, :, :]
    tenMask[tenMask > 0.999] = 1.0
    tenMask[tenMask < 1.0] = 0.0
    return tenOutput[:, :-1, :, :] * tenMask


def correlation(tenOne, tenTwo, intStride=1, intDisplacement=4):
    """The FlowNet correlation layer, kernel size 1, as a loop of shifted products."""
    tenTwo = F.pad(tenTwo, [intDisplacement] * 4)
    intHeight, intWidth = tenOne.shape[2], tenOne.shape[3]
    tenCost = []
    for intY in range(0, 2 * intDisplacement + 1, intStride):
        for intX in range(0, 2 * intDisplacement + 1, intStride):
            tenShifted = tenTwo[:, :, intY:intY + intHeight, intX:intX + intWidth]
            tenCost.append((tenOne * tenShifted).mean(1, keepdim=True))
    return torch.cat(tenCost, 1)


class Extractor(torch.nn.Module):
    def __init__(self, channels=(3, 8, 12, 16)):
        super().__init__()
        self.netLevels = torch.nn.ModuleList()
        for intIn, intOut in zip(channels[:-1], channels[1:]):
            self.netLevels.append(torch.nn.Sequential(
                torch.nn.Conv2d(in_channels=intIn, out_channels=intOut, kernel_size=3, stride=2, padding=1),
                torch.nn.LeakyReLU(inplace=False, negative_slope=0.1),
                torch.nn.Conv2d(in_channels=intOut, out_channels=intOut, kernel_size=3, stride=1, padding=1),
                torch.nn.LeakyReLU(inplace=False, negative_slope=0.1)))

    def forward(self, tenInput):
        tenFeatures = []
        for netLevel in self.netLevels:
            tenInput = netLevel(tenInput)
            tenFeatures.append(tenInput)
        return tenFeatures


class Decoder(torch.nn.Module):
    intDisplacement = 2
    intCurrent_of = {1: 8, 2: 12, 3: 16}
    fltBackwarp_of = {1: 5.0, 2: 2.5, 3: None}

    def __init__(self, intLevel):
        super().__init__()
        intCost = (2 * self.intDisplacement + 1) ** 2
        intCurrent = intCost + self.intCurrent_of[intLevel] + 2 + 2 if intLevel < 3 else intCost
        intPrevious = intCost + self.intCurrent_of.get(intLevel + 1, 0) + 2 + 2 + 16 + 12 \
            if intLevel + 1 < 3 else intCost + 16 + 12
        if intLevel < 3:
            self.netUpflow = torch.nn.ConvTranspose2d(in_channels=2, out_channels=2, kernel_size=4, stride=2,
                                                      padding=1)
            self.netUpfeat = torch.nn.ConvTranspose2d(in_channels=intPrevious, out_channels=2,
                                                      kernel_size=4, stride=2, padding=1)
            self.fltBackwarp = self.fltBackwarp_of[intLevel]
        self.netOne = torch.nn.Sequential(torch.nn.Conv2d(intCurrent, 16, 3, 1, 1),
                                          torch.nn.LeakyReLU(inplace=False, negative_slope=0.1))
        self.netTwo = torch.nn.Sequential(torch.nn.Conv2d(intCurrent + 16, 12, 3, 1, 1),
                                          torch.nn.LeakyReLU(inplace=False, negative_slope=0.1))
        self.netSix = torch.nn.Sequential(torch.nn.Conv2d(intCurrent + 16 + 12, 2, 3, 1, 1))

    def forward(self, tenOne, tenTwo, objPrevious):
        tenFlow = None
        tenFeat = None
        if objPrevious is None:
            tenVolume = F.leaky_relu(correlation(tenOne, tenTwo, intDisplacement=self.intDisplacement),
                                     negative_slope=0.1, inplace=False)
            tenFeat = torch.cat([tenVolume], 1)
        elif objPrevious is not None:
            tenFlow = self.netUpflow(objPrevious["tenFlow"])
            tenFeat = self.netUpfeat(objPrevious["tenFeat"])
            tenVolume = F.leaky_relu(correlation(tenOne, backwarp(tenTwo, tenFlow * self.fltBackwarp),
                                                 intDisplacement=self.intDisplacement),
                                     negative_slope=0.1, inplace=False)
            tenFeat = torch.cat([tenVolume, tenOne, tenFlow, tenFeat], 1)
        tenFeat = torch.cat([self.netOne(tenFeat), tenFeat], 1)
        tenFeat = torch.cat([self.netTwo(tenFeat), tenFeat], 1)
        tenFlow = self.netSix(tenFeat)
        return {"tenFlow": tenFlow, "tenFeat": tenFeat}


class Refiner(torch.nn.Module):
    def __init__(self, intIn):
        super().__init__()
        self.netMain = torch.nn.Sequential(
            torch.nn.Conv2d(intIn, 16, 3, 1, 1, dilation=1), torch.nn.LeakyReLU(inplace=False, negative_slope=0.1),
            torch.nn.Conv2d(16, 16, 3, 1, 2, dilation=2), torch.nn.LeakyReLU(inplace=False, negative_slope=0.1),
            torch.nn.Conv2d(16, 8, 3, 1, 4, dilation=4), torch.nn.LeakyReLU(inplace=False, negative_slope=0.1),
            torch.nn.Conv2d(8, 2, 3, 1, 1, dilation=1))

    def forward(self, tenInput):
        return self.netMain(tenInput)


class Network(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.netExtractor = Extractor()
        self.netTwo = Decoder(1)
        self.netThr = Decoder(2)
        self.netFou = Decoder(3)
        self.netRefiner = Refiner(25 + 8 + 2 + 2 + 16 + 12)

    def forward(self, tenOne, tenTwo):
        intWidth = tenOne.shape[3]
        intHeight = tenOne.shape[2]
        intPreprocessedWidth = int(math.floor(math.ceil(intWidth / 16.0) * 16.0))
        intPreprocessedHeight = int(math.floor(math.ceil(intHeight / 16.0) * 16.0))
        tenPreprocessedOne = F.interpolate(input=tenOne, size=(intPreprocessedHeight, intPreprocessedWidth),
                                           mode="bilinear", align_corners=False)
        tenPreprocessedTwo = F.interpolate(input=tenTwo, size=(intPreprocessedHeight, intPreprocessedWidth),
                                           mode="bilinear", align_corners=False)
        tenOne = self.netExtractor(tenPreprocessedOne)
        tenTwo = self.netExtractor(tenPreprocessedTwo)
        objEstimate = self.netFou(tenOne[-1], tenTwo[-1], None)
        objEstimate = self.netThr(tenOne[-2], tenTwo[-2], objEstimate)
        objEstimate = self.netTwo(tenOne[-3], tenTwo[-3], objEstimate)
        tenFlow = objEstimate["tenFlow"] + self.netRefiner(objEstimate["tenFeat"])
        tenFlow = 20.0 * F.interpolate(input=tenFlow, size=(intHeight, intWidth), mode="bilinear",
                                       align_corners=False)
        tenFlow[:, 0, :, :] *= float(intWidth) / float(intPreprocessedWidth)
        tenFlow[:, 1, :, :] *= float(intHeight) / float(intPreprocessedHeight)
        return tenFlow


torch.manual_seed(0)
model = Network().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.rand(1, 3, 36, 44, generator=g), torch.rand(1, 3, 36, 44, generator=g))
