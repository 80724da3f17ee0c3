// The engine's own kernels (NVRTC, f32 maps in NCHW order, sums in f64). Every loop is a
// grid-stride loop over flat indices; the sums are written per block into `part` (two per
// block) and added by `finish` in block order: deterministic for a fixed grid.
//
// The norm-free variants' activation is not here: `act(z)` = s(z) and `slope(z, s)` = s'(z)
// given s = s(z) are generated from the activation registry and put before this file
// (`kernels.rs`, `source`). NaN propagates as on the host engine (a diverged step must
// reach the loss).

#define LOOP(i, n) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); i += (long long)blockDim.x * gridDim.x)
#define R_SQRT2 0.70710678118654752f

__device__ __forceinline__ float relu(float v) { return v < 0.f ? 0.f : v; }

// The option-A shortcut's value at output (n, c, i, j): the input there (identity), or input
// pixel (2i, 2j) for the first cin channels and zero beyond (downsampling). `has` says
// whether the channel is carried.
__device__ __forceinline__ float shortcut(const float* x, long long idx, int C, int H, int W,
                                          int cin, int hin, int win, int down, bool* has) {
    if (!down) { *has = true; return x[idx]; }
    long long hw = (long long)H * W;
    int j = (int)(idx % W);
    int i = (int)((idx / W) % H);
    int c = (int)((idx / hw) % C);
    long long n = idx / (hw * C);
    if (c >= cin) { *has = false; return 0.f; }
    *has = true;
    return x[((n * cin + c) * hin + 2 * i) * (long long)win + 2 * j];
}

// The block's (at most 256 threads) two sums of a and b, a tree in shared memory in a fixed
// order (deterministic); valid in thread 0.
__device__ void tree_sums(double a, double b, double* ta, double* tb) {
    __shared__ double sa[256];
    __shared__ double sb[256];
    sa[threadIdx.x] = a;
    sb[threadIdx.x] = b;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sa[threadIdx.x] += sa[threadIdx.x + s];
            sb[threadIdx.x] += sb[threadIdx.x + s];
        }
        __syncthreads();
    }
    *ta = sa[0];
    *tb = sb[0];
}

// Adds a block's two running sums into part[2 blockIdx.x + {0, 1}].
__device__ void block_sums(double a, double b, double* part) {
    double ta, tb;
    tree_sums(a, b, &ta, &tb);
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = ta;
        part[2 * blockIdx.x + 1] = tb;
    }
}

extern "C" __global__ void relu_inplace(float* y, long long n) {
    LOOP(i, n) y[i] = relu(y[i]);
}

// y = relu(y + S x).
extern "C" __global__ void shortcut_add_relu(float* y, const float* x, int C, int H, int W,
                                             int cin, int hin, int win, int down, long long n) {
    LOOP(i, n) {
        bool has;
        float s = shortcut(x, i, C, H, W, cin, hin, win, down, &has);
        float v = y[i];
        if (has) v += s;
        y[i] = relu(v);
    }
}

// dx (+)= S^T dy over the input maps [n, cin, hin, win] (dy: [n, cout, hout, wout]).
extern "C" __global__ void shortcut_adjoint(float* dx, const float* dy, int cout, int hout,
                                            int wout, int cin, int hin, int win, int down,
                                            int acc, long long n) {
    LOOP(i, n) {
        float v;
        if (!down) {
            v = dy[i];
        } else {
            int j = (int)(i % win);
            int r = (int)((i / win) % hin);
            int c = (int)((i / ((long long)win * hin)) % cin);
            long long b = i / ((long long)win * hin * cin);
            v = ((r % 2) == 0 && (j % 2) == 0)
                    ? dy[((b * cout + c) * hout + r / 2) * (long long)wout + j / 2]
                    : 0.f;
        }
        dx[i] = acc ? dx[i] + v : v;
    }
}

// g = from [y > 0] (from = g when null): ReLU's backward through its output.
extern "C" __global__ void relu_mask(float* g, const float* from, const float* y, long long n) {
    LOOP(i, n) {
        float v = from ? from[i] : g[i];
        g[i] = y[i] > 0.f ? v : 0.f;
    }
}

// z *= gain[pixel] (when given), out = s(z).
extern "C" __global__ void act_forward(float* z, float* out, const float* gain, int hw,
                                       long long n) {
    LOOP(i, n) {
        float v = z[i];
        if (gain) { v = v * gain[i % hw]; z[i] = v; }
        out[i] = act(v);
    }
}

// m = z2 gain (when given), merged with the shortcut on the carried channels
// ((S x + m) / sqrt 2), y = s(m).
extern "C" __global__ void merge_act_forward(float* m, float* y, const float* x,
                                             const float* gain, int C, int H, int W, int cin,
                                             int hin, int win, int down, long long n) {
    LOOP(i, n) {
        float v = m[i];
        if (gain) v = v * gain[i % ((long long)H * W)];
        bool has;
        float s = shortcut(x, i, C, H, W, cin, hin, win, down, &has);
        if (has) v = (s + v) * R_SQRT2;
        m[i] = v;
        y[i] = act(v);
    }
}

// dz = dy s'(m), times 1 / sqrt 2 on the carried channels.
extern "C" __global__ void merge_act_backward(float* dz, const float* dy, const float* m,
                                              const float* y, int C, int hw, int carried,
                                              long long n) {
    LOOP(i, n) {
        int c = (int)((i / hw) % C);
        float d = dy[i] * slope(m[i], y[i]);
        dz[i] = c < carried ? d * R_SQRT2 : d;
    }
}

// d *= gain[pixel].
extern "C" __global__ void scale_gain(float* d, const float* gain, int hw, long long n) {
    LOOP(i, n) d[i] = d[i] * gain[i % hw];
}

// dh *= s'(z) (then gain[pixel], when given).
extern "C" __global__ void act_backward(float* dh, const float* z, const float* h,
                                        const float* gain, int hw, long long n) {
    LOOP(i, n) {
        float v = dh[i] * slope(z[i], h[i]);
        if (gain) v = v * gain[i % hw];
        dh[i] = v;
    }
}

// out = x + *s (Fixup's scalar biases, read from the parameters on the device).
extern "C" __global__ void add_scalar(float* out, const float* x, const float* s, long long n) {
    float b = *s;
    LOOP(i, n) out[i] = x[i] + b;
}

// z = relu(z + *b).
extern "C" __global__ void bias_relu(float* z, const float* b, long long n) {
    float v = *b;
    LOOP(i, n) z[i] = relu(z[i] + v);
}

// y = relu(z2 scale + b2b + S xs).
extern "C" __global__ void fixup_out(float* y, const float* z2, const float* scale,
                                     const float* b2b, const float* xs, int C, int H, int W,
                                     int cin, int hin, int win, int down, long long n) {
    float s = *scale, b = *b2b;
    LOOP(i, n) {
        float v = z2[i] * s + b;
        bool has;
        float x = shortcut(xs, i, C, H, W, cin, hin, win, down, &has);
        if (has) v += x;
        y[i] = relu(v);
    }
}

// g = dy [y > 0] in place, dz = g scale; sums (g z2, g).
extern "C" __global__ void fixup_out_backward(float* g, const float* y, const float* z2,
                                              float* dz, const float* scale, double* part,
                                              long long n) {
    float s = *scale;
    double a = 0.0, b = 0.0;
    LOOP(i, n) {
        float v = y[i] > 0.f ? g[i] : 0.f;
        g[i] = v;
        dz[i] = v * s;
        a += (double)v * (double)z2[i];
        b += (double)v;
    }
    block_sums(a, b, part);
}

// sums (dh before, dh after) of ReLU's backward through a1, in place.
extern "C" __global__ void mask_sums(float* dh, const float* a1, double* part, long long n) {
    double a = 0.0, b = 0.0;
    LOOP(i, n) {
        float v = dh[i];
        a += (double)v;
        v = a1[i] > 0.f ? v : 0.f;
        dh[i] = v;
        b += (double)v;
    }
    block_sums(a, b, part);
}

// sums (x, 0).
extern "C" __global__ void total(const float* x, double* part, long long n) {
    double a = 0.0;
    LOOP(i, n) a += (double)x[i];
    block_sums(a, 0.0, part);
}

// *out0 = sum of part[2k], *out1 = sum of part[2k + 1] over the blocks (either may be null):
// one block of 256 threads, each summing a fixed stride of the blocks, then a tree in shared
// memory (a fixed order: deterministic).
extern "C" __global__ void finish(const double* part, int blocks, float* out0, float* out1) {
    double a = 0.0, b = 0.0;
    for (int k = threadIdx.x; k < blocks; k += blockDim.x) { a += part[2 * k]; b += part[2 * k + 1]; }
    double ta, tb;
    tree_sums(a, b, &ta, &tb);
    if (threadIdx.x == 0) {
        if (out0) *out0 = (float)ta;
        if (out1) *out1 = (float)tb;
    }
}

// pooled[n c] = mean over the pixels of y (+ *bias2 when given).
extern "C" __global__ void pool(float* pooled, const float* y, int hw, const float* bias2,
                                long long nc) {
    LOOP(r, nc) {
        double acc = 0.0;
        const float* p = y + r * hw;
        for (int k = 0; k < hw; k++) acc += (double)p[k];
        float v = (float)(acc * (1.0 / (double)hw));
        if (bias2) v = v + *bias2;
        pooled[r] = v;
    }
}

// dx[n c p] = da[n c] / hw.
extern "C" __global__ void unpool(float* dx, const float* da, int hw, float inv, long long n) {
    LOOP(i, n) dx[i] = da[i / hw] * inv;
}

// logits[i, j] += b[j].
extern "C" __global__ void add_bias_rows(float* logits, const float* b, int k, long long n) {
    LOOP(i, n) logits[i] = logits[i] + b[i % k];
}

// The end of a loss kernel (one block of blockDim.x <= 256 threads, after each thread has
// written its rows of dl and summed its rows' loss, hits and non-finite flag): the block's
// sums, db[j] = sum_i dl[i, j] (the classifier bias's gradient), out[0] = the summed loss
// (NaN when a logit was not finite), out[1] = the hits, and *ok = 1 when the loss is finite.
__device__ void finish_loss(double loss, double correct, int nonfinite, int rows, int k,
                            const float* dl, float* db, double* out, int* ok) {
    __shared__ double sl[256];
    __shared__ double sc[256];
    __shared__ int bad[256];
    sl[threadIdx.x] = loss;
    sc[threadIdx.x] = correct;
    bad[threadIdx.x] = nonfinite;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sl[threadIdx.x] += sl[threadIdx.x + s];
            sc[threadIdx.x] += sc[threadIdx.x + s];
            bad[threadIdx.x] |= bad[threadIdx.x + s];
        }
        __syncthreads();
    }
    for (int j = threadIdx.x; j < k; j += blockDim.x) {
        double acc = 0.0;
        for (int i = 0; i < rows; i++) acc += (double)dl[(long long)i * k + j];
        db[j] = (float)acc;
    }
    if (threadIdx.x == 0) {
        bool fin = !bad[0] && isfinite(sl[0]);
        out[0] = fin ? sl[0] : 0.0 / 0.0;
        out[1] = sc[0];
        *ok = fin ? 1 : 0;
    }
}

// The summed cross-entropy of B rows of k logits, the rows whose first maximal logit is the
// label, dl = (softmax - onehot) / B, and db[j] = sum_i dl[i, j]. One block. out[0] = loss
// (NaN when a logit is not finite), out[1] = correct; *ok = 1 when the loss is finite.
extern "C" __global__ void softmax_ce(const float* logits, const int* labels, int rows, int k,
                                      float* dl, float* db, double* out, int* ok) {
    double loss = 0.0, correct = 0.0;
    int nonfinite = 0;
    double inv_b = 1.0 / (double)rows;
    for (int i = threadIdx.x; i < rows; i += blockDim.x) {
        const float* r = logits + (long long)i * k;
        double best = -1.0 / 0.0;
        int arg = 0;
        bool nan = false;
        for (int j = 0; j < k; j++) {
            double v = (double)r[j];
            if (v != v) nan = true;
            if (v > best) { best = v; arg = j; }
        }
        if (nan || !isfinite(best)) { nonfinite = 1; continue; }
        int y = labels[i];
        if (arg == y) correct += 1.0;
        double sum = 0.0;
        for (int j = 0; j < k; j++) sum += exp((double)r[j] - best);
        loss += log(sum) + best - (double)r[y];
        for (int j = 0; j < k; j++) {
            double p = exp((double)r[j] - best) / sum;
            dl[(long long)i * k + j] = (float)((p - (j == y ? 1.0 : 0.0)) * inv_b);
        }
    }
    finish_loss(loss, correct, nonfinite, rows, k, dl, db, out, ok);
}

// The square loss (ntk_engine::Loss::Mse) of B rows of k logits f: the summed
// (1/2) ||f_i - t_i||^2 against the targets t_i, one-hot e_{y_i} for k >= 2 and 2 y_i - 1
// (-1 or +1) for k = 1; the rows predicting their label (k >= 2: the first maximal logit is
// the label; k = 1: f > 0 exactly for label 1); dl = (f - t) / B and db[j] = sum_i dl[i, j].
// One block. out[0] = loss (NaN when a logit is not finite), out[1] = correct; *ok = 1 when
// the loss is finite.
extern "C" __global__ void square_error(const float* logits, const int* labels, int rows,
                                        int k, float* dl, float* db, double* out, int* ok) {
    double loss = 0.0, correct = 0.0;
    int nonfinite = 0;
    double inv_b = 1.0 / (double)rows;
    for (int i = threadIdx.x; i < rows; i += blockDim.x) {
        const float* r = logits + (long long)i * k;
        bool finite = true;
        int arg = 0;
        for (int j = 0; j < k; j++) {
            if (!isfinite(r[j])) finite = false;
            if (r[j] > r[arg]) arg = j;
        }
        if (!finite) { nonfinite = 1; continue; }
        int y = labels[i];
        if (k == 1 ? ((r[0] > 0.f) == (y == 1)) : (arg == y)) correct += 1.0;
        for (int j = 0; j < k; j++) {
            double t = k == 1 ? (y == 1 ? 1.0 : -1.0) : (j == y ? 1.0 : 0.0);
            double d = (double)r[j] - t;
            loss += 0.5 * d * d;
            dl[(long long)i * k + j] = (float)(d * inv_b);
        }
    }
    finish_loss(loss, correct, nonfinite, rows, k, dl, db, out, ok);
}

// Burn's SGD rule (PyTorch's, dampening 0) on every parameter, skipped when !*ok:
// g += wd w; v = g (first step) or mu v + g; g = mu v + g (Nesterov) or v; w -= lr g, with
// lr = hyper[1] where scalar[i] (Fixup's scalars at their own rate), hyper[0] elsewhere;
// hyper[2] != 0 on the first step.
extern "C" __global__ void sgd(float* w, const float* g, float* v, const unsigned char* scalar,
                               const float* hyper, const int* ok, float mu, float wd,
                               int decay, int momentum, int nesterov, long long n) {
    if (!*ok) return;
    float lr = hyper[0], lr_s = hyper[1];
    int first = hyper[2] != 0.f;
    LOOP(i, n) {
        float gi = g[i];
        float wi = w[i];
        if (decay) gi = wi * wd + gi;
        if (momentum) {
            float vi = first ? gi : gi + v[i] * mu;
            v[i] = vi;
            gi = nesterov ? vi * mu + gi : vi;
        }
        float rate = (scalar && scalar[i]) ? lr_s : lr;
        w[i] = wi - gi * rate;
    }
}

// BatchNorm's running statistics from the batch's (skipped when !*ok): r = (1 - m) r + m s
// with the biased variance, recovered from cuDNN's saved 1 / sqrt(var + eps).
extern "C" __global__ void bn_running(float* mean, float* var, const float* save_mean,
                                      const float* save_inv_std, double m, double eps,
                                      const int* ok, int c) {
    if (!*ok) return;
    LOOP(i, c) {
        double s = (double)save_inv_std[i];
        double bv = 1.0 / (s * s) - eps;
        mean[i] = (float)((1.0 - m) * (double)mean[i] + m * (double)save_mean[i]);
        var[i] = (float)((1.0 - m) * (double)var[i] + m * bv);
    }
}
