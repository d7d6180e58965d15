#!/usr/bin/python3
"""Writes the two TorchScript models experiments/hw_measure.sh times with
`aware measure` (Debian's python3-torch; no torchvision needed):

  resnet_small.pt       a ResNet-style CNN written here: a 3x3 stem, three stages of
                        two bottleneck blocks (1x1, 3x3, 1x1 convolutions with batch norm
                        and ReLU, a projection shortcut where the shape changes), global
                        average pooling and a linear classifier; input `x` [N, 3, H, W]
  transformer_small.pt  two encoder layers (multi-head self-attention and a ReLU MLP,
                        post-norm, written here with Linear, bmm-style matmul, softmax and
                        LayerNorm) on float features; input `x` [N, T, 256]

Both are traced in training mode, so the graph holds the training-time ops.
    /usr/bin/python3 experiments/hw_measure_models.py OUT_DIR
"""
import os
import sys

import torch
from torch import nn


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
            nn.Conv2d(mid, mid, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
                      if stride != 1 or cin != cout else nn.Identity())
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.body(x) + self.short(x))


class ResNetSmall(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU()]
        cin = 32
        for mid, cout, stride in [(32, 128, 1), (64, 256, 2), (128, 512, 2)]:
            layers += [Bottleneck(cin, mid, cout, stride), Bottleneck(cout, mid, cout, 1)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(cin, 100)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.norm1 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, ffn), nn.ReLU(), nn.Linear(ffn, d))
        self.norm2 = nn.LayerNorm(d)

    def forward(self, x):
        n, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        split = lambda y: y.reshape(n, t, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        attention = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        y = (attention @ v).transpose(1, 2).reshape(n, t, d)
        x = self.norm1(x + self.out(y))
        return self.norm2(x + self.mlp(x))


class TransformerSmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(EncoderLayer(256, 4, 1024), EncoderLayer(256, 4, 1024))
        self.head = nn.Linear(256, 1000)

    def forward(self, x):
        return self.head(self.layers(x))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    for name, model, example in [("resnet_small", ResNetSmall(), torch.randn(2, 3, 32, 32)),
                                 ("transformer_small", TransformerSmall(), torch.randn(2, 16, 256))]:
        model.train()
        torch.jit.trace(model, example).save(os.path.join(out, name + ".pt"))


if __name__ == "__main__":
    main()
