"""The independent route for ntk-onnx: PyTorch models exported to ONNX and their empirical
NTK computed by torch.func in float64.

For each model: build it in PyTorch (fixed seed), export it with the TorchScript exporter
(`torch.onnx.export(..., dynamo=False)`, weights included, a dynamic batch axis), draw
fixed inputs, and compute K_ij = sum_o <d f_o(x_i)/d theta, d f_o(x_j)/d theta> over every
parameter (`named_parameters`, the buffers held fixed) with torch.func (jacrev over the
parameters, vmap over samples) on the model cast to float64. Writes, per model NAME:
NAME.onnx, NAME_x.npy (the inputs, one sample per row, float64, NCHW flattened for
images), NAME_ntk.npy (float64). Models: mlp_relu, mlp_tanh, mlp_gelu (5-64-64-1),
mixed (the remaining operators), mlp_gelu_op (opset 20's Gelu node), resnet_small. Also unsupported_softmax.onnx (a graph with a Softmax
node, for the unsupported-operator error).

    python3 experiments/onnx/torch_reference.py --out crates/ntk-onnx/tests/fixtures \
        --example configs/onnx_mlp.onnx --train-example configs/train_onnx_mlp.onnx
"""

import argparse
import os

import numpy as np
import onnx
import torch
from torch import nn
from torch.func import functional_call, jacrev, vmap


# nn.GELU exports (opset 17) as x * 0.5 * (1 + erf(x / sqrt(2))) with sqrt(2) stored in
# float32, so its file's graph is GELU with a constant 3e-8 off; torch.func's float64 GELU
# uses sqrt(2) exactly, and the kernels then differ by 9.4e-9 relative (measured) for a
# reason outside both routes. This module is that exported graph in PyTorch: the same ops,
# the divisor float32(sqrt(2)) in both routes.
SQRT2_F32 = float(np.float32(np.sqrt(2.0)))


class ErfGelu(nn.Module):
    """GELU as the exporter writes it: x * 0.5 * (1 + erf(x / float32(sqrt 2)))."""

    def forward(self, x):
        return x * 0.5 * (1.0 + torch.erf(x / SQRT2_F32))


def mlp(act):
    """5 -> 64 -> 64 -> 1 with the activation `act`."""
    return nn.Sequential(
        nn.Linear(5, 64), act(), nn.Linear(64, 64), act(), nn.Linear(64, 1)
    )


# ONNX stores operator attributes in float32: Selu's alpha and gamma are SELU's constants
# rounded to float32 (3e-8 off the float64 ones torch.selu uses). The exported graph's SELU.
SELU_ALPHA_F32 = float(np.float32(1.6732632423543772))
SELU_GAMMA_F32 = float(np.float32(1.0507009873554805))


class Mixed(nn.Module):
    """The other operators: LeakyReLU, SELU, sigmoid, ELU, dropout (evaluation: the
    identity, which the exporter drops), a reshape to 4 x 4 and back (Reshape, Flatten), a
    subtraction and a division by constants, and a bare parameter product (MatMul, Add).
    The slopes are exact in float32; `as_exported` switches SELU to the exported graph's
    constants for the float64 NTK (the parameters are the same)."""

    def __init__(self):
        super().__init__()
        self.as_exported = False
        self.l1 = nn.Linear(5, 16)
        self.l2 = nn.Linear(16, 16)
        self.l3 = nn.Linear(16, 16)
        self.drop = nn.Dropout(0.5)
        self.w = nn.Parameter(torch.randn(16, 2) / 4.0)
        self.b = nn.Parameter(torch.randn(2) / 4.0)

    def forward(self, x):
        x = nn.functional.leaky_relu(self.l1(x), 0.125)
        z = self.l2(x)
        if self.as_exported:
            x = SELU_GAMMA_F32 * nn.functional.elu(z, alpha=SELU_ALPHA_F32)
        else:
            x = torch.selu(z)
        x = nn.functional.elu(torch.sigmoid(self.l3(x)) - 0.5, alpha=0.75)
        x = self.drop(x) / 1.5
        x = torch.flatten(x.reshape(-1, 4, 4), 1)
        return x @ self.w + self.b


class Block(nn.Module):
    """conv-BN-ReLU-conv-BN, added to the input, then ReLU (a ResNet basic block)."""

    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b2(self.c2(y)) + x)


class SmallResNet(nn.Module):
    """3x8x8 images: conv-BN-ReLU stem, one residual block, max pool, average pool, a
    second block, global average pool, flatten, linear to 2 outputs."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.block1 = Block(8)
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1)
        self.block2 = Block(8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        x = torch.relu(self.bn(self.stem(x)))
        x = self.block1(x)
        x = self.avg(self.pool(x))
        x = self.block2(x)
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.head(x)


def randomize_batch_norm(model, gen):
    """Non-trivial running statistics, scales and shifts (evaluation mode uses them)."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(0.3 * torch.randn(c, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(c, generator=gen))
                m.weight.copy_(1.0 + 0.2 * torch.randn(c, generator=gen))
                m.bias.copy_(0.1 * torch.randn(c, generator=gen))


def ntk(model, x):
    """sum_o J_o J_o^T over every parameter, per sample, by torch.func."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def f(p, xi):
        return functional_call(model, (p, buffers), (xi.unsqueeze(0),)).squeeze(0)

    jac = vmap(jacrev(f), in_dims=(None, 0))(params, x)  # each [n, outputs, *shape]
    n = x.shape[0]
    flat = torch.cat([j.reshape(n, j.shape[1], -1) for j in jac.values()], dim=2)
    return torch.einsum("iop,jop->ij", flat, flat)


def export(model, example, path, opset=17):
    torch.onnx.export(
        model,
        (example,),
        path,
        dynamo=False,
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
        opset_version=opset,
        do_constant_folding=False,
        training=torch.onnx.TrainingMode.PRESERVE,
    )


def write(out, name, model, x, opset=17):
    """Exports `model` (float32, evaluation mode) and writes the inputs and the NTK."""
    model = model.float().eval()
    export(model, x[:1].float(), os.path.join(out, f"{name}.onnx"), opset)
    if hasattr(model, "as_exported"):
        model.as_exported = True
    k = ntk(model.double(), x.double())
    flat = x.double().reshape(x.shape[0], -1).numpy()
    np.save(os.path.join(out, f"{name}_x.npy"), flat)
    np.save(os.path.join(out, f"{name}_ntk.npy"), k.numpy())
    ops = sorted({n.op_type for n in onnx.load(os.path.join(out, f"{name}.onnx")).graph.node})
    print(f"{name}: {sum(p.numel() for p in model.parameters())} parameters, ops {ops}")


def unsupported(out):
    """A linear layer followed by a Softmax node named 'head/Softmax'."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((3, 2), dtype=np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["z"], name="head/MatMul"),
            helper.make_node("Softmax", ["z"], ["y"], name="head/Softmax", axis=1),
        ],
        "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "unsupported_softmax.onnx"))


def example(path):
    """The example of configs/onnx_mlp.toml: a 5 -> 32 -> 32 -> 1 tanh MLP (1,281
    parameters, about 5 KB)."""
    torch.manual_seed(2)
    model = nn.Sequential(
        nn.Linear(5, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)
    ).eval()
    export(model, torch.zeros(1, 5), path)
    print(f"{path}: {sum(p.numel() for p in model.parameters())} parameters")


def train_example(path):
    """The example of configs/train_onnx_mlp.toml (`ntk-train` on the 8x8 digits): a
    64 -> 32 -> 32 -> 10 ReLU MLP (3,466 parameters, about 14 KB), PyTorch's default
    initialization."""
    torch.manual_seed(3)
    model = nn.Sequential(
        nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10)
    ).eval()
    export(model, torch.zeros(1, 64), path)
    print(f"{path}: {sum(p.numel() for p in model.parameters())} parameters")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory for the fixtures")
    parser.add_argument("--example", help="also write the example model to this path")
    parser.add_argument(
        "--train-example", help="also write the training example model to this path"
    )
    args = parser.parse_args()
    if args.example:
        example(args.example)
    if args.train_example:
        train_example(args.train_example)
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    x_mlp = torch.randn(16, 5, generator=gen, dtype=torch.float64)
    for name, act in [("mlp_relu", nn.ReLU), ("mlp_tanh", nn.Tanh), ("mlp_gelu", ErfGelu)]:
        write(args.out, name, mlp(act), x_mlp)
    net = SmallResNet()
    randomize_batch_norm(net, gen)
    x_img = torch.randn(8, 3, 8, 8, generator=gen, dtype=torch.float64)
    write(args.out, "resnet_small", net, x_img)
    write(args.out, "mixed", Mixed(), x_mlp)
    # At opset 20 nn.GELU is one Gelu node (exact: erf), computed in float64 on both sides.
    write(args.out, "mlp_gelu_op", mlp(nn.GELU), x_mlp, opset=20)
    unsupported(args.out)


if __name__ == "__main__":
    main()
