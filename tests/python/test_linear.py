"""tunekit.Linear: constant weights, results against NumPy per token count, the choice it made,
and the errors bad arguments raise."""

import numpy as np
import pytest

import tunekit

RNG = np.random.default_rng(17)


def rand(shape):
    return RNG.uniform(-1, 1, size=shape).astype(np.float32)


def test_matches_numpy_per_token_count_and_reports_its_choice(monkeypatch):
    monkeypatch.setenv("TUNEKIT_MAX_SEARCH_TRIALS", "4")
    w = rand((48, 40))
    layer = tunekit.Linear(w)
    assert (layer.out_features, layer.in_features) == (48, 40)
    for tokens in (1, 5, 16, 33):
        x = rand((tokens, 40))
        np.testing.assert_allclose(layer(x), x @ w.T, rtol=1e-4, atol=1e-4)  # tuned
        np.testing.assert_allclose(layer(x), x @ w.T, rtol=1e-4, atol=1e-4)  # the choice
        choice = layer.choice(tokens)
        assert choice["solution"] and choice["pack_ms"] >= 0.0


def test_a_slice_of_rows_is_read_in_place():
    big = rand((64, 50))
    w = big[:, :40]  # rows of 40 floats 50 apart
    layer = tunekit.Linear(w)
    x = rand((3, 40))
    np.testing.assert_allclose(layer(x), x @ w.T, rtol=1e-4, atol=1e-4)


def test_the_weights_stay_alive_with_the_handle():
    layer = tunekit.Linear(rand((8, 8)).copy())
    x = rand((2, 8))
    assert layer(x).shape == (2, 8)


def test_bad_arguments_raise_tunekit_errors():
    with pytest.raises(tunekit.DTypeError, match="float64; float32 or bfloat16 expected"):
        tunekit.Linear(np.ones((4, 4), dtype=np.float64))
    with pytest.raises(tunekit.DTypeError, match="float16; float32 or bfloat16 expected"):
        tunekit.Linear(np.ones((4, 4), dtype=np.float16))
    with pytest.raises(tunekit.DTypeError, match="not an array"):
        tunekit.Linear(None)
    with pytest.raises(ValueError, match="2-d"):
        tunekit.Linear(np.ones(4, dtype=np.float32))
    with pytest.raises(ValueError, match="contiguous rows"):
        tunekit.Linear(np.ones((4, 4), dtype=np.float32).T)
    layer = tunekit.Linear(np.ones((4, 6), dtype=np.float32))
    with pytest.raises(ValueError, match="in_features"):
        layer(np.ones((2, 5), dtype=np.float32))
    with pytest.raises(tunekit.NotFoundError, match="no forward"):
        layer.choice(3)
    with pytest.raises(ValueError, match="^tunekit.Linear: tokens must be 0 or more"):
        layer.choice(-1)
    with pytest.raises(ValueError, match="^tunekit.Linear: out_features"):
        tunekit.Linear(np.zeros((0, 6), dtype=np.float32))


def test_zero_tokens_give_an_empty_result():
    layer = tunekit.Linear(rand((5, 6)))
    y = layer(np.zeros((0, 6), dtype=np.float32))
    assert y.shape == (0, 5) and y.dtype == np.float32


def test_bfloat16_weights_give_float32_results():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    w = rand((48, 40)).astype(ml_dtypes.bfloat16)
    layer = tunekit.Linear(w)
    for tokens in (1, 16, 33):
        x = rand((tokens, 40)).astype(ml_dtypes.bfloat16)
        want = x.astype(np.float64) @ w.astype(np.float64).T
        got = layer(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert layer.choice(tokens)["solution"]
    with pytest.raises(tunekit.DTypeError, match="x is float32 but the weights are bfloat16"):
        layer(rand((2, 40)))
    with pytest.raises(tunekit.DTypeError, match="x is bfloat16 but the weights are float32"):
        tunekit.Linear(rand((4, 40)))(rand((2, 40)).astype(ml_dtypes.bfloat16))
