"""tunekit.torch: PyTorch's CPU matrix products through the GEMM tunable op (skipped without
torch). The extension compiles once per build folder (TUNEKIT_TORCH_BUILD_DIR)."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
tt = pytest.importorskip("tunekit.torch")
from tunekit import tunable  # noqa: E402

F = torch.nn.functional


@pytest.fixture(autouse=True)
def torch_mode():
    tt.enable()
    tt.reset_stats()
    yield
    tt.disable()


def stock(fn):
    """fn() with PyTorch's own kernels."""
    tt.disable()
    try:
        return fn()
    finally:
        tt.enable()


def served():
    return tt.stats()["served"][0]


def test_linear_float32_matches_stock_and_is_served():
    g = torch.Generator().manual_seed(0)
    x, w, b = (torch.randn(*s, generator=g) for s in ((5, 7, 64), (96, 64), (96,)))
    for bias in (None, b):
        got = F.linear(x, w, bias)
        assert torch.allclose(got, stock(lambda: F.linear(x, w, bias)), atol=1e-4, rtol=1e-4)
    assert served() == 2
    assert tt.is_enabled()


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_mm_every_transpose(ta, tb):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(33, 17, generator=g)
    w = torch.randn(17, 29, generator=g)
    x = x.t().contiguous().t() if ta else x
    w = w.t().contiguous().t() if tb else w
    assert torch.allclose(torch.mm(x, w), stock(lambda: torch.mm(x, w)), atol=1e-4)
    assert served() == 1


def test_padded_leading_dimensions_and_scalars():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(20, 40, generator=g)[:, :31]  # lda 40 > 31
    w = torch.randn(31, 50, generator=g)[:, 3:45]
    c = torch.randn(20, 42, generator=g)
    nan = torch.full((20, 42), float("nan"))
    for inp, beta, alpha in ((c, 0.5, 2.0), (nan, 0.0, 1.5), (c[0], 1.0, 1.0), (c[0], 2.0, 1.0)):
        got = torch.addmm(inp, x, w, beta=beta, alpha=alpha)
        want = stock(lambda: torch.addmm(inp, x, w, beta=beta, alpha=alpha))
        assert torch.allclose(got, want, atol=1e-4, rtol=1e-4), (beta, alpha)
    assert served() == 4


def test_batched_products_with_broadcast():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 9, 12, generator=g)
    w = torch.randn(12, 7, generator=g).expand(4, 12, 7)  # batch stride 0
    inp = torch.randn(9, 7, generator=g)
    assert torch.allclose(torch.bmm(x, w), stock(lambda: torch.bmm(x, w)), atol=1e-4)
    got = torch.baddbmm(inp, x, w, beta=0.25, alpha=-1.0)
    want = stock(lambda: torch.baddbmm(inp, x, w, beta=0.25, alpha=-1.0))
    assert torch.allclose(got, want, atol=1e-4)
    assert served() == 2


def test_bfloat16_writes_bfloat16_close_to_float():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(16, 256, generator=g).bfloat16()
    w = torch.randn(128, 256, generator=g).bfloat16()
    got = F.linear(x, w)
    assert got.dtype == torch.bfloat16
    want = stock(lambda: F.linear(x.float(), w.float()))
    assert torch.allclose(got.float(), want, atol=0.1, rtol=2 ** -7)
    b = torch.randn(128, generator=g).bfloat16()
    with_bias = F.linear(x, w, b)  # GemmAndBiasTunableOp_BFloat16: bf16 bias and C
    assert with_bias.dtype == torch.bfloat16
    assert torch.allclose(with_bias.float(), want + b.float(), atol=0.1, rtol=2 ** -7)
    xb, wb = x.view(4, 4, 256), w.t().reshape(1, 256, 128).expand(4, 256, 128)
    batched = torch.bmm(xb, wb)
    assert batched.dtype == torch.bfloat16
    assert torch.allclose(batched.float().reshape(16, 128), want, atol=0.1, rtol=2 ** -7)
    assert served() == 3


def test_what_tunekit_cannot_take_falls_through_with_its_reason():
    x64 = torch.randn(8, 8, dtype=torch.float64)
    assert torch.equal(torch.mm(x64, x64), stock(lambda: torch.mm(x64, x64)))
    strided = torch.randn(8, 16)[:, ::2]  # no unit stride
    assert torch.allclose(torch.mm(strided, strided), stock(lambda: torch.mm(strided, strided)))
    assert torch.mm(torch.randn(3, 0), torch.randn(0, 4)).abs().sum() == 0
    ints = torch.ones(3, 3, dtype=torch.int32)
    assert torch.equal(torch.mm(ints, ints), torch.full((3, 3), 3, dtype=torch.int32))
    s = tt.stats()
    assert s["dtype"][0] == 2 and s["layout"][0] == 1 and s["empty"][0] == 1
    assert s["served"][0] == 0


def test_disable_puts_torch_back():
    tt.disable()
    assert not tt.is_enabled()
    torch.mm(torch.randn(4, 4), torch.randn(4, 4))
    assert served() == 0
    tt.enable()
    torch.mm(torch.randn(4, 4), torch.randn(4, 4))
    assert served() == 1


def test_results_carry_torch_validators(tmp_path):
    torch.mm(torch.randn(6, 10), torch.randn(10, 12))
    keys = dict(tunable.get_validators())
    for key, value in tt.validators().items():
        assert keys[key] == value
    with open(tunable.get_filename(), encoding="utf-8") as f:
        text = f.read()
    assert "Validator,TORCH_VERSION," in text and "GemmTunableOp_float_NN,nn_12_6_10" in text


def test_a_file_tuned_without_torch_is_refused(tmp_path):
    plain = tmp_path / "plain.csv"
    lines = [f"Validator,{k},{v}" for k, v in tunable.get_validators() if not k.startswith("TORCH")]
    plain.write_text("\n".join(lines + ["GemmTunableOp_float_NN,nn_5_5_5_ld_5_5_5,eigen,0.1"]) + "\n")
    with pytest.raises(Exception, match="TORCH_VERSION"):
        tunable.read_file(str(plain))


RECORD = """
import torch, tunekit.torch as tt
from tunekit import tunable
tt.enable()
tunable.tuning_enable(False)
tunable.record_untuned_enable(True)
torch.nn.functional.linear(torch.randn(3, 40), torch.randn(24, 40))
"""


def test_record_then_tune_offline_with_torch_loaded(tmp_path):
    untuned = tmp_path / "untuned.csv"
    results = tmp_path / "offline.csv"
    env = dict(os.environ, TUNEKIT_UNTUNED_FILENAME=str(untuned), TUNEKIT_MAX_SEARCH_TRIALS="0",
               TUNEKIT_MAX_TUNING_ITERATIONS="1", TUNEKIT_MAX_TUNING_DURATION_MS="1")
    subprocess.run([sys.executable, "-c", RECORD], check=True, env=env, cwd=tmp_path, timeout=600)
    recorded = next(tmp_path.glob("untuned*.csv"))
    assert "GemmTunableOp_float_TN,tn_24_3_40" in recorded.read_text()
    subprocess.run([sys.executable, "-m", "tunekit.torch", "tune", str(recorded), "--results",
                    str(results)], check=True, env=env, cwd=tmp_path, timeout=600)
    text = results.read_text()
    assert "Validator,TORCH_VERSION," in text and "tn_24_3_40" in text
    assert tunable.read_file(str(results))


def test_autograd_trains_like_stock():
    def train(enabled):
        tt.enable(enabled)
        torch.manual_seed(5)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(),
                                    torch.nn.Linear(64, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        data = torch.randn(16, 32, generator=torch.Generator().manual_seed(6))
        target = torch.randint(0, 10, (16,), generator=torch.Generator().manual_seed(7))
        for _ in range(5):
            opt.zero_grad()
            F.cross_entropy(model(data), target).backward()
            opt.step()
        return [p.grad.clone() for p in model.parameters()]

    want = train(False)
    tt.reset_stats()
    got = train(True)
    assert served() >= 5 * 5  # forward and backward products went through tunekit
    for g, w in zip(got, want):
        assert torch.allclose(g, w, atol=1e-5, rtol=1e-4)


def test_torch_compile_runs_and_matches():
    model = torch.nn.Sequential(torch.nn.Linear(32, 48), torch.nn.ReLU(), torch.nn.Linear(48, 8))
    x = torch.randn(4, 32)
    want = stock(lambda: model(x))
    compiled = torch.compile(model)
    with torch.no_grad():
        got = compiled(x)
    assert torch.allclose(got, want, atol=1e-5)
    assert served() >= 2  # inductor's extern mm/addmm calls go through the dispatcher


def test_expanded_and_overlapping_operands_fall_through_and_match():
    w = torch.randn(16, 12)
    cases = [torch.randn(1, 16).expand(8, 16), torch.randn(100).unfold(0, 16, 3)[:8],
             torch.randn(8, 1).expand(8, 16), torch.randn(200).as_strided((8, 16), (2, 1)),
             torch.randn(200).as_strided((8, 16), (1, 4))]
    for x in cases:
        assert torch.allclose(x @ w, x.contiguous() @ w, atol=1e-5)
        assert torch.allclose(w.t() @ x.t(), w.t() @ x.t().contiguous(), atol=1e-5)
    xb = torch.randn(3, 1, 16).expand(3, 8, 16)
    assert torch.allclose(torch.bmm(xb, w.expand(3, 16, 12)), torch.bmm(xb.contiguous(), w.expand(3, 16, 12)), atol=1e-5)
    assert tt.stats()["layout"][0] >= len(cases)


def test_gradients_of_a_reduction_match_stock():
    def grads(enabled):
        tt.enable(enabled)
        torch.manual_seed(8)
        lin = torch.nn.Linear(64, 32)
        x = torch.randn(16, 64, requires_grad=True)
        ((lin(x).sum(dim=-1) ** 2).mean() + (lin(x).sum(dim=0) ** 2).mean()).backward()
        return x.grad, lin.weight.grad

    for got, want in zip(grads(True), grads(False)):
        assert torch.allclose(got, want, atol=1e-4, rtol=1e-4)


def test_scalars_and_errors_as_stock():
    x, w, c = torch.randn(8, 16), torch.randn(16, 12), torch.randn(8, 12)
    for kw in (dict(beta=float("nan")), dict(alpha=float("inf"))):
        got, want = torch.addmm(c, x, w, **kw), stock(lambda: torch.addmm(c, x, w, **kw))
        assert torch.equal(got.isnan(), want.isnan())
    with pytest.raises(RuntimeError, match="overflow"):
        torch.addmm(c, x, w, alpha=1e300)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found BFloat16"):
        torch.bmm(torch.randn(2, 4, 4), torch.randn(2, 4, 4).bfloat16())
    assert tt.stats()["scalar"][0] == 3


def test_in_place_products_are_served():
    x, w, c = torch.randn(8, 16), torch.randn(16, 12), torch.randn(8, 12)
    got, want = c.clone(), c.clone()
    got.addmm_(x, w, beta=0.5, alpha=2.0)
    stock(lambda: want.addmm_(x, w, beta=0.5, alpha=2.0))
    assert torch.allclose(got, want, atol=1e-5)
    b = torch.randn(2, 8, 12)
    gotb, wantb = b.clone(), b.clone()
    xb, wb = torch.randn(2, 8, 16), torch.randn(2, 16, 12)
    gotb.baddbmm_(xb, wb)
    stock(lambda: wantb.baddbmm_(xb, wb))
    assert torch.allclose(gotb, wantb, atol=1e-5)
    assert served() == 2


def test_a_stored_winner_is_confirmed_in_place_against_torch(tmp_path):
    assert tunable.get_confirm_calls() == tt.CONFIRM_CALLS  # torch mode's default
    signature = "nn_48_40_32_ld_48_32_48"  # torch.mm(x[40, 32], w[32, 48]) in BLAS form
    stored = tmp_path / "stored.csv"
    lines = [f"Validator,{k},{v}" for k, v in tunable.get_validators()]
    stored.write_text("\n".join(lines + [f"GemmTunableOp_float_NN,{signature},openblas,0.001"]) + "\n")
    assert tunable.read_file(str(stored))
    g = torch.Generator().manual_seed(9)
    x, w = torch.randn(40, 32, generator=g), torch.randn(32, 48, generator=g)
    want = stock(lambda: torch.mm(x, w))
    for _ in range(1 + 2 + tt.CONFIRM_CALLS + 2):  # the stored winner, the warm-up pair, the pairs
        assert torch.allclose(torch.mm(x, w), want, atol=1e-4)
    verdicts = [c for c in tunable.get_confirmations() if c[1] == signature]
    assert len(verdicts) == 1, tunable.get_confirmations()
    op, _, solution, winner_ms, torch_ms, _ = verdicts[0]
    assert (op, solution) == ("GemmTunableOp_float_NN", "openblas")
    assert winner_ms > 0 and torch_ms > 0
