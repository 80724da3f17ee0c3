"""The authors' condition_num.py (github.com/Like-Hui/condition_num_ntk), its math unchanged,
run on the CPU for given inputs, depths and seeds, and every network handed to our probe:

- the network class `NN` and `empirical_ntk` are the official code's, verbatim, except that
  functorch's `make_functional` (gone from current PyTorch) is replaced by
  `torch.func.functional_call` with the same `vmap(jacrev(...))` and einsum ('trace': the
  NTK summed over the single output);
- per depth and seed, as the official loop does: `torch.manual_seed(seed)` (and numpy's,
  Python's), the network drawn, then `torch.randperm(n)` for the blocks of `batch_size`
  samples; each block's eigenvalues by `np.linalg.eig` of the float32 kernel, sorted, kappa
  = largest / smallest;
- beside the official numbers it writes what the probe needs to compute the same blocks of
  the same network: the weights as safetensors (`layers.{i}.weight`, the names of
  `ntk-probe --save-weights`), the blocks as a text file (one block per line, its row
  indices), and the inputs as .npy (float64 copies of the float32 values the official code
  used).

    python3 official.py --inputs inputs_draw0.npy --depths 1 3 5 --seeds 1 32 --out work/draw0
"""
import argparse
import json
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file
from torch.func import functional_call, jacrev, vmap

device = "cpu"
layer_sizes = None  # the official forward reads this global, set per network below


class NN(nn.Module):
    def __init__(self, layer_sizes):
        super(NN, self).__init__()
        self.linears = nn.ModuleList()
        for i in range(len(layer_sizes) - 1):
            m = nn.Linear(layer_sizes[i], layer_sizes[i+1], bias=False)
            nn.init.normal_(m.weight.data)
            self.linears.append(m)

    def forward(self, x):
        a = 0
        for linear in self.linears[:-1]:
            if a == 0:
                x = F.relu(linear(x))/np.sqrt(layer_sizes[a])*np.sqrt(2)
                a += 1
            else:
                x = F.relu(linear(x)) / np.sqrt(layer_sizes[a]) * np.sqrt(2)
                a += 1
        x = self.linears[-1](x) / np.sqrt(layer_sizes[-2]) * np.sqrt(2)

        return x


def empirical_ntk(fnet_single, params, x1, x2, compute='trace'):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = [j.flatten(2) for j in jac1.values()]

    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = [j.flatten(2) for j in jac2.values()]

    einsum_expr = None
    if compute == 'full':
        einsum_expr = 'Naf, Mbf->NMab'
    elif compute == 'trace':
        einsum_expr = 'Naf, Maf->NM'
    elif compute == 'diagonal':
        einsum_expr = 'Naf, Maf->NMa'
    else:
        assert False

    result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
    result = result.sum(0)

    return result


def main():
    global layer_sizes
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", required=True, help="float32 inputs as .npy (n x d)")
    ap.add_argument("--depths", type=int, nargs="+", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", required=True)
    ap.add_argument("--hid", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OFFICIAL_THREADS", "2")))
    train_x = torch.tensor(np.load(args.inputs).astype(np.float32)).to(device)
    n, in_dim = train_x.shape
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "inputs.npy"), train_x.numpy().astype(np.float64))
    for l in args.depths:
        for seed in args.seeds:
            name = f"depth{l}_seed{seed}"
            done = os.path.join(args.out, name + ".json")
            if os.path.exists(done):
                continue
            os.environ['PYTHONHASHSEED'] = str(seed)
            torch.manual_seed(seed)
            np.random.seed(seed)
            random.seed(seed)

            layer_sizes = [in_dim] + [args.hid] * l + [1]
            net = NN(layer_sizes).to(device)
            params = {k: v.detach() for k, v in net.named_parameters()}

            def fnet_single(params, x):
                return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

            blocks, kappas, lmins, lmaxs = [], [], [], []
            with torch.no_grad():
                permutation = torch.randperm(train_x.size()[0])
                for i in range(0, train_x.size()[0], args.batch_size):
                    indices = permutation[i:i + args.batch_size]
                    batch_x = train_x[indices]

                    ntk_result = empirical_ntk(fnet_single, params, batch_x, batch_x, 'trace')
                    lambda_K, eigvec_K = np.linalg.eig(ntk_result.detach().cpu().numpy())
                    # sort in decreasing order
                    lambda_K = np.sort(np.real(lambda_K))[::-1]
                    lmins.append(float(lambda_K[-1]))
                    lmaxs.append(float(lambda_K[0]))
                    kappas.append(float(lambda_K[0] / lambda_K[-1]))
                    blocks.append(indices.tolist())
            save_file({f"layers.{i}.weight": m.weight.detach().contiguous()
                       for i, m in enumerate(net.linears)},
                      os.path.join(args.out, name + ".safetensors"))
            with open(os.path.join(args.out, name + ".blocks"), "w") as f:
                for b in blocks:
                    f.write(",".join(map(str, b)) + "\n")
            tmp = done + ".tmp"
            with open(tmp, "w") as f:
                json.dump({"depth": l, "seed": seed, "n": n, "block_size": args.batch_size,
                           "kappa": kappas, "lambda_min": lmins, "lambda_max": lmaxs,
                           "mean_kappa": sum(kappas) / len(kappas)}, f)
            os.replace(tmp, done)
            print(f"{name}: block kappas {['%.4g' % k for k in kappas]}", flush=True)


if __name__ == "__main__":
    main()
