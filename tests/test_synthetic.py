"""essence.data.synthetic: the seeded multidimensional-IRT generator used for cost curves (GENERATED data)."""

import numpy as np
import pytest

from essence.data.errors import InputError
from essence.data.synthetic import generate_matrix, generate_mirt, mirt_parameters


def test_same_seed_same_matrix_and_labelled_generated():
    a = generate_mirt(60, 80, seed=4)
    b = generate_mirt(60, 80, seed=4, chunk_models=7)  # chunking does not change the draws' values
    c = generate_mirt(60, 80, seed=5)
    np.testing.assert_array_equal(a.responses, b.responses)
    assert not np.array_equal(a.responses, c.responses)
    assert a.name.startswith("generated") and a.shape == (60, 80)
    np.testing.assert_array_equal(generate_matrix(60, 80, seed=4), a.responses.astype(np.float32))
    assert set(np.unique(a.responses)) <= {0.0, 1.0}
    np.testing.assert_allclose(a.target, 100 * a.responses.mean(axis=1))


def test_responses_follow_the_model():
    """Abler models score higher; item accuracies spread like a real benchmark's and never fall far below
    the guessing floor; items of the same subject correlate more than items of different subjects."""
    d = generate_mirt(3000, 200, dims=4, seed=0, guessing=0.25)
    ability = d.model_extras["ability"]
    assert np.corrcoef(ability, d.target)[0, 1] > 0.9
    p = d.responses.mean(axis=0)
    assert p.min() > 0.2 and p.max() > 0.9 and np.percentile(p, 90) - np.percentile(p, 10) > 0.3
    subj = d.item_extras["subject"]
    C = np.corrcoef(d.responses.T)
    same = subj[:, None] == subj[None, :]
    off = ~np.eye(subj.size, dtype=bool)
    assert C[same & off].mean() > C[~same].mean() + 0.02
    no_guess = generate_mirt(3000, 200, dims=4, seed=0, guessing=0.0)
    assert no_guess.responses.mean(axis=0).min() < 0.2


def test_bad_arguments():
    with pytest.raises(InputError, match="n_items"):
        mirt_parameters(10, 0)
    with pytest.raises(InputError, match="rho"):
        mirt_parameters(10, 5, rho=1.0)
    with pytest.raises(InputError, match="guessing"):
        mirt_parameters(10, 5, guessing=1.5)
