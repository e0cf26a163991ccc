#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Exports torchvision CNNs (ResNet-50, MobileNetV2, MobileNetV3-Large, EfficientNet-B0,
# DenseNet-121, ConvNeXt-Tiny; and, to try architectures the cuda target was not tuned on,
# ResNeXt-50 and RegNetY (grouped convolutions), ShuffleNetV2 (channel shuffles), MnasNet,
# SqueezeNet (fire modules), GoogLeNet (Inception branches), EfficientNetV2-S (fused MBConv),
# VGG-16), ViT-B/16, Swin-T and Swin-V2-T (shifted-window attention), MaxViT-T, and
# Hugging Face BERT-base, DistilBERT and GPT-2 (sequence 128), random
# weights, batch 1 (or N for a name ending in "-bN": "densenet121-b32"), to ONNX, with one input
# and PyTorch's float32 output beside each (a case folder: model.onnx, test_data_set_0/input_0.npy and .pb, torch_output_0.npy, and
# torch_tf32_output_0.npy: PyTorch's output with TF32 in every contraction), and times
# PyTorch on the GPU: eager, torch.compile (default) and torch.compile(mode="reduce-overhead"),
# medians of 100 runs between CUDA events after warm-up, float32 with PyTorch's default TF32
# settings for convolutions (cuDNN allows TF32; matmul precision left "highest" as PyTorch
# ships it). Usage: torch_models.py OUT_DIR [export|eager|time|kernels] [MODEL...]
# "kernels" runs the reduce-overhead mode under PyTorch's profiler and prints its kernels
# grouped by name, the most GPU time first: the outside reference for fusebench's own profile.
import json
import os
import re
import statistics
import sys
import time

import numpy as np
import torch

MODELS = ["resnet50", "mobilenet_v2", "bert"]  # the default set; any name below when named
# torchvision image classifiers, 224x224 inputs.
VISION = {"resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "densenet121",
          "convnext_tiny", "vit_b_16", "swin_t", "resnext50_32x4d", "regnet_y_800mf",
          "shufflenet_v2_x1_0", "mnasnet1_0", "squeezenet1_1", "googlenet", "efficientnet_v2_s",
          "vgg16", "swin_v2_t", "maxvit_t"}
# Constructor arguments beyond weights=None: GoogLeNet's auxiliary heads only train, and its
# own initialization (std 0.01 everywhere, zero biases) shrinks the activations to nothing by
# the head, so that every logit is the head's zero bias and the output check cannot fail;
# PyTorch's default initialization keeps them alive.
VISION_ARGS = {"googlenet": {"aux_logits": False, "init_weights": False}}


def split_batch(name):
    """("densenet121", 32) for "densenet121-b32"; batch 1 without the suffix."""
    m = re.fullmatch(r"(.+)-b(\d+)", name)
    return (m.group(1), int(m.group(2))) if m else (name, 1)


def make(name):
    torch.manual_seed(0)
    arch, batch = split_batch(name)
    arch = "vit_b_16" if arch == "vit" else arch
    if arch in VISION:
        import torchvision
        if arch == "vit_b_16":
            # The fused attention fast path has no ONNX form: the plain one exports.
            torch.backends.mha.set_fastpath_enabled(False)
        model = getattr(torchvision.models, arch)(weights=None, **VISION_ARGS.get(arch, {})).eval()
        if arch == "vit_b_16":
            # torchvision starts ViT's head at zeros: every output would be 0 and the check
            # against PyTorch's output could not fail.
            torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        return model, torch.randn(batch, 3, 224, 224)
    if arch == "gpt2":
        from transformers import GPT2Config, GPT2Model
        cfg = GPT2Config()
        ids = torch.randint(0, cfg.vocab_size, (batch, 128), dtype=torch.int64)
        return HiddenState(GPT2Model(cfg).eval()).eval(), ids
    if arch == "distilbert":
        from transformers import DistilBertConfig, DistilBertModel
        cfg = DistilBertConfig()
        ids = torch.randint(0, cfg.vocab_size, (batch, 128), dtype=torch.int64)
        return BertWrap(DistilBertModel(cfg).eval()).eval(), ids
    if arch != "bert":
        sys.exit(f"torch_models.py: unknown model {name!r}")
    from transformers import BertConfig, BertModel
    cfg = BertConfig()
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (batch, 128), dtype=torch.int64)
    return BertWrap(model).eval(), ids


class HiddenState(torch.nn.Module):
    """input_ids in, last hidden state out, no cache: one input, one output."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, use_cache=False).last_hidden_state


class BertWrap(torch.nn.Module):
    """input_ids in, last hidden state out: one input, one output."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, ids):
        return self.bert(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state


def export(out, name):
    model, x = make(name)
    case = os.path.join(out, name)
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    path = os.path.join(case, "model.onnx")
    t0 = time.time()
    try:
        torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                          opset_version=17, dynamo=False)
    except Exception as e:  # the TorchScript exporter may be gone: the dynamo one then
        print(f"{name}: TorchScript export failed ({e}); trying dynamo", flush=True)
        torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                          dynamo=True, external_data=False)
    np.save(os.path.join(case, "test_data_set_0", "input_0.npy"), x.numpy())
    # The same input as a TensorProto, so that the case also serves bench/cpu-vs-ort (ONNX
    # Runtime against the cpu target on the same machine), which reads input_K.pb.
    from onnx import numpy_helper
    with open(os.path.join(case, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x.numpy(), "input").SerializeToString())
    with torch.no_grad():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        y = model.cuda()(x.cuda()).float().cpu().numpy()
        # PyTorch's own TF32 output too, all contractions in TF32: how far TF32 alone moves
        # this model's output from float32, whoever computes it.
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        y_tf32 = model(x.cuda()).float().cpu().numpy()
        torch.backends.cuda.matmul.allow_tf32 = False
    np.save(os.path.join(case, "torch_output_0.npy"), y)
    np.save(os.path.join(case, "torch_tf32_output_0.npy"), y_tf32)
    print(f"{name}: exported in {time.time() - t0:.1f} s, {os.path.getsize(path) / 1e6:.1f} MB",
          flush=True)


def bench(fn, x, warm=20, n=100):
    with torch.no_grad():
        for _ in range(warm):
            fn(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(n):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn(x)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
    return statistics.median(times), min(times)


def time_modes(out, name, modes):
    model, x = make(name)
    model = model.cuda()
    x = x.cuda()
    res = {}
    for mode in modes:
        t0 = time.time()
        if mode == "eager":
            fn = model
        elif mode == "compile":
            fn = torch.compile(model)
        else:
            fn = torch.compile(model, mode="reduce-overhead")
        med, lo = bench(fn, x)
        res[mode] = {"median_ms": med, "min_ms": lo, "setup_s": time.time() - t0}
        print(f"torch {name} {mode}: median {med:.3f} ms, min {lo:.3f} ms "
              f"(setup {time.time() - t0:.0f} s)", flush=True)
    with open(os.path.join(out, f"torch-{name}.json"), "w") as f:
        json.dump(res, f)


def kernels(name, top=25):
    from torch.profiler import ProfilerActivity, profile
    model, x = make(name)
    fn = torch.compile(model.cuda(), mode="reduce-overhead")
    x = x.cuda()
    runs = 20
    with torch.no_grad():
        for _ in range(20):
            fn(x)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(runs):
                fn(x)
            torch.cuda.synchronize()
    rows = [e for e in prof.key_averages() if e.device_time_total > 0]
    total = sum(e.device_time_total for e in rows) / runs
    launches = sum(e.count for e in rows) / runs
    print(f"torch {name} reduce-overhead kernels: {launches:.0f} a run, {total / 1e3:.3f} ms of "
          f"GPU time a run", flush=True)
    for e in sorted(rows, key=lambda e: -e.device_time_total)[:top]:
        print(f"  {e.device_time_total / runs:9.1f} us {e.count / runs:5.1f}x  {e.key[:110]}")


def main():
    out = sys.argv[1]
    what = sys.argv[2] if len(sys.argv) > 2 else "export"
    names = sys.argv[3:] or MODELS
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    for name in names:
        if what == "export":
            export(out, name)
        elif what == "eager":
            time_modes(out, name, ["eager"])
        elif what == "kernels":
            kernels(name)
        else:
            time_modes(out, name, ["eager", "compile", "reduce-overhead"])


if __name__ == "__main__":
    main()
