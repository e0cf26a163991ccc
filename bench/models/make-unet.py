#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a segmentation U-Net laid out like the common PyTorch one (milesial's Pytorch-UNet,
bilinear=False), random seeded weights, 1x3x256x256 input, 1x2x256x256 logits, at half that
model's channel widths (32 .. 512 instead of 64 .. 1024) so that one inference is about
12 G multiply-adds instead of 48 and stays well under a second on one core.

    DoubleConv(c_in, c): (3x3 conv pad 1 without bias, BN, Relu) x2
    inc:    DoubleConv 3 -> 32                                           256x256
    down1:  MaxPool 2x2/2, DoubleConv 32 -> 64                           128x128
    down2:  MaxPool 2x2/2, DoubleConv 64 -> 128                           64x64
    down3:  MaxPool 2x2/2, DoubleConv 128 -> 256                          32x32
    down4:  MaxPool 2x2/2, DoubleConv 256 -> 512                          16x16
    upK:    ConvTranspose 2x2/2 with bias 2C -> C, Concat [skip, up] on the channels,
            DoubleConv 2C -> C, for C = 256, 128, 64, 32                 32x32 .. 256x256
    outc:   1x1 conv with bias 32 -> 2                                   256x256

Names follow the torch modules (inc.double_conv.0 is the first conv, .1 its BN, .2 its Relu;
downK.maxpool_conv.1.double_conv.N; upK.up; upK.conv.double_conv.N; outc.conv). The Pad that
torch's Up writes to match an odd-sized skip is left out: every map here halves evenly, so
the upsampled map and its skip always agree and the exporter would pad by zero.

Usage: make-unet.py [OUT_DIR]   (default: build/bench/unet in the repository)
"""
from fb_bench_model import Builder, write

SEED = 2560
# The BatchNormalization scale of every DoubleConv. Nothing here renormalizes the way trained
# statistics would, and each MaxPool (the largest of four) and ConvTranspose adds a little
# gain: at 1.0 the maps' rms climbs from 1 to over 5 by the last DoubleConv and the logits
# spread to +-33, where summation-order differences on near-zero logits come within a
# factor of two of the check's tolerance (rtol 1e-3, atol 1e-4).
# At 0.9 every map stays at an rms of about 1 to 2 and the logits within +-9.
GAMMA = 0.9
WIDTHS = [32, 64, 128, 256, 512]


def double_conv(b, scope, x, c_in, c_out):
    """torch's nn.Sequential(Conv2d, BatchNorm2d, ReLU, Conv2d, BatchNorm2d, ReLU): its
    children are numbered 0 .. 5, and the exporter names the nodes after them."""
    for i, c in enumerate((c_in, c_out)):
        y = b.conv(f"{scope}.double_conv.{3 * i}", x, c, c_out, 3)
        y = b.batch_norm(f"{scope}.double_conv.{3 * i + 1}", y, c_out, GAMMA)
        x = b.node("Relu", f"{scope}.double_conv.{3 * i + 2}", [y])
    return x


def build():
    b = Builder(SEED)
    x = double_conv(b, "inc", "input", 3, WIDTHS[0])
    skips = [x]
    for k in range(1, 5):
        x = b.max_pool(f"down{k}.maxpool_conv.0", x, 2, 2)
        x = double_conv(b, f"down{k}.maxpool_conv.1", x, WIDTHS[k - 1], WIDTHS[k])
        skips.append(x)
    skips.pop()  # the bottom map is what the first Up upsamples, not a skip
    for k in range(1, 5):
        c = WIDTHS[4 - k]
        x = b.conv_transpose(f"up{k}.up", x, 2 * c, c, 2, 2)
        # torch.cat([x2, x1], dim=1): the encoder's skip first, the upsampled map second.
        x = b.concat(f"up{k}", [skips.pop(), x])
        x = double_conv(b, f"up{k}.conv", x, 2 * c, c)
    b.conv("outc.conv", x, WIDTHS[0], 2, 1, bias=True)
    # The graph output takes a plain name, as the exporter's output_names gives it.
    b.nodes[-1].output[0] = "logits"
    return b.model("unet", "input", [1, 3, 256, 256], "logits", [1, 2, 256, 256],
                   "U-Net (milesial Pytorch-UNet layout, half widths), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "unet", SEED)
