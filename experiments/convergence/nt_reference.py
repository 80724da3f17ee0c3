"""The values neural-tangents predicts for the fixed kernel of ntk-kernel's test
`gradient_flow_matches_neural_tangents` (crates/ntk-kernel/src/predict.rs): its
`predict.gradient_descent_mse` (gradient flow on the square loss) fed the same kernel,
targets and initial outputs. The test holds our `Linearized::flow` to these numbers.

    python3 -m venv /tmp/ntvenv && /tmp/ntvenv/bin/pip install "jax[cpu]==0.4.30" \
        neural-tangents==0.6.5 tf2jax==0.3.6   # versions that import together
    /tmp/ntvenv/bin/python experiments/convergence/nt_reference.py

neural-tangents' loss is 0.5 * mean over all n * c entries (its `normalization` is
`y_train.size`); ours is (1/2n) * sum, so its time t = tau * c gives our time tau.
"""
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import neural_tangents as nt  # noqa: E402

n, m, c, r = 6, 3, 2, 4
b = jnp.array([[((i * 13 + j * 7) % 17) / 8.0 - 1.0 for j in range(r)] for i in range(n + m)])
k = b @ b.T + 0.1 * jnp.eye(n + m)
k_train, k_test = k[:n, :n], k[n:, :n]
y = jnp.array([[((i * 5 + j * 3) % 7) / 3.0 - 1.0 for j in range(c)] for i in range(n)])
f0 = jnp.array([[(i - j) / 5.0 for j in range(c)] for i in range(n)])
f0_test = jnp.array([[(i + j) / 7.0 for j in range(c)] for i in range(m)])
predict = nt.predict.gradient_descent_mse(k_train, y, learning_rate=1.0, diag_reg=0.0)
print(f"// neural-tangents {nt.__version__}, jax {jax.__version__}")
for tau in [0.5, 2.0, 10.0]:
    f_train, f_test = predict(t=tau * c, fx_train_0=f0, fx_test_0=f0_test, k_test_train=k_test)
    loss = float(jnp.sum((f_train - y) ** 2) / (2 * n))
    print(f"({tau!r}, {loss!r}, [{', '.join(repr(float(v)) for v in f_test.ravel())}]),")
