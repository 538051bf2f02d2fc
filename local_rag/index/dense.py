"""FAISS inner-product index over L2-normalized vectors; GPU when faiss-gpu is installed and a GPU is visible.

The vectors themselves are kept beside the index (``vectors.f16.npy``) so that adding or removing documents, or
switching the FAISS factory, never re-embeds the rest of the corpus.

On the GPU (`gpu_placement`): Flat and IVF indexes move with ``index_cpu_to_gpu``. An HNSW graph cannot (FAISS has no
GPU HNSW; ``index_cpu_to_gpu`` throws), so the stored vectors go into an exact flat GPU index instead, the same
vectors searched exhaustively: at least HNSW's recall, far faster on a GPU. Any other index type, or a failed move,
stays on the CPU with a warning. FAISS's scratch memory on the GPU is fixed at `GPU_TEMP_MEMORY` (`local-rag plan`
counts it).
"""

from __future__ import annotations

import io
import logging
import os
import re
import shutil
from pathlib import Path

import numpy as np

from local_rag._optional import require
from local_rag.device import faiss_gpu_count
from local_rag.errors import BadInputError, IndexError_
from local_rag.index.factory import faiss_reason, resolve_factory
from local_rag.settings import DenseConfig

INDEX_FILE = "faiss.index"
VECTORS_FILE = "vectors.f16.npy"
SUBSET_BLOCK = 1 << 16  # rows of stored vectors scored at a time by `DenseIndex.search_rows` (~100 MB at 384 dims)
EXACT_ROWS = 50_000  # a scope of at most this many rows is searched exactly by a non-flat index (~40 ms at 384 dims)
GPU_TEMP_MEMORY = 256 << 20  # StandardGpuResources scratch (its default is 0.5-1.5 GiB by card size): enough for top-100
# searches of a few queries at a time; larger requests fall back to cudaMalloc
# index types that index_cpu_to_gpu moves (faiss/gpu/GpuCloner.cpp); everything else throws or is unsupported
GPU_MOVABLE = ("IndexFlat", "IndexFlatIP", "IndexFlatL2", "IndexIVFFlat", "IndexIVFPQ", "IndexIVFScalarQuantizer")

log = logging.getLogger("local_rag.index")


def gpu_placement(index_type: str, use_gpu: str, gpus: int) -> tuple[str, str]:
    """Where a loaded FAISS index of class ``index_type`` is searched: ``("cpu" | "gpu" | "gpu-flat", why)``.

    ``gpu``: moved as is; ``gpu-flat``: an HNSW index replaced on the GPU by an exact flat index of the stored
    vectors; ``cpu``: no GPU wanted or usable (``why`` says which, and is a warning when a GPU was asked for).

    Example:
        >>> gpu_placement("IndexHNSWFlat", "auto", 1)[0]
        'gpu-flat'
    """
    if use_gpu == "no":
        return "cpu", "dense.use_gpu is no"
    if gpus == 0:
        return "cpu", ("dense.use_gpu is yes but the faiss build sees no GPU (faiss-cpu installed, or no GPU): "
                       "searching on the CPU") if use_gpu == "yes" else "no GPU for faiss"
    if index_type in GPU_MOVABLE:
        return "gpu", f"{index_type} moved to the GPU"
    if index_type.startswith("IndexHNSW"):
        return "gpu-flat", (f"{index_type} cannot move to the GPU (FAISS has no GPU HNSW): the stored vectors are "
                            "searched exactly by a flat GPU index instead")
    return "cpu", f"{index_type} cannot move to the GPU: searching on the CPU (a Flat or IVF factory can)"


def append_rows(source: Path, target: Path, rows: list[np.ndarray]) -> bool:
    """Write into ``target`` the 2-d array stored in ``source`` (a .npy file) with ``rows`` appended, without reading
    it: a kernel copy of the file, the new rows written at its end, and the header's shape rewritten in place (NumPy
    pads a header so that its first dimension can grow). False, with nothing written, where the header cannot be
    rewritten in place or the rows do not match; the caller then saves the whole array."""
    fmt = np.lib.format
    with source.open("rb") as fh:
        version = fmt.read_magic(fh)
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = read_header(fh)
        offset = fh.tell()
    if fortran or len(shape) != 2 or any(r.ndim != 2 or r.shape[1] != shape[1] or r.dtype != dtype for r in rows):
        return False
    header = io.BytesIO()
    new_shape = (shape[0] + sum(r.shape[0] for r in rows), shape[1])
    write_header = fmt.write_array_header_1_0 if version == (1, 0) else fmt.write_array_header_2_0
    write_header(header, {"descr": fmt.dtype_to_descr(dtype), "fortran_order": False, "shape": new_shape})
    if header.tell() != offset:
        return False
    shutil.copyfile(source, target)
    with target.open("r+b") as fh:
        fh.write(header.getvalue())
        fh.seek(0, os.SEEK_END)
        for r in rows:
            fh.write(np.ascontiguousarray(r).tobytes())
    return True


def _faiss_flat() -> type:
    return require("faiss", "dense retrieval").IndexFlat  # type: ignore[no-any-return]


class DenseIndex:
    """Row ``i`` of the FAISS index is chunk ``i`` of the index folder."""

    def __init__(self, index: object, vectors: np.ndarray, config: DenseConfig, factory: str = "",
                 source: Path | None = None) -> None:
        self.index = index
        self._vectors = vectors
        self._tail: list[np.ndarray] = []  # rows added by `extend`, kept apart until asked for (see `save`)
        self._source = source  # the stored file ``_vectors`` is memory-mapped from (`load`)
        self.config = config
        self.factory = factory or config.factory  # the factory string built (``auto`` resolved)
        self.on_gpu = False

    @property
    def vectors(self) -> np.ndarray:
        """The stored (float16) vectors, row ``i`` for chunk ``i``."""
        if self._tail:
            self._vectors, self._tail, self._source = np.concatenate([self._vectors, *self._tail]), [], None
        return self._vectors

    @property
    def size(self) -> int:
        return int(self._vectors.shape[0]) + sum(int(t.shape[0]) for t in self._tail)

    @property
    def dimension(self) -> int:
        return int(self._vectors.shape[1])

    @classmethod
    def build(cls, vectors: np.ndarray, config: DenseConfig) -> DenseIndex:
        faiss = require("faiss", "dense retrieval")
        # vectors are stored as float16; index the same rounded values so a rebuild from storage is identical
        stored = np.asarray(vectors, dtype=np.float16)
        vectors = np.ascontiguousarray(stored, dtype=np.float32)
        factory = resolve_factory(config.factory, len(vectors))
        match = re.match(r"IVF(\d+)", factory)
        if match and int(match.group(1)) * 39 > len(vectors):
            # FAISS wants ~39 training points per list; a small corpus gets fewer lists rather than a bad index
            lists = max(1, len(vectors) // 39)
            factory = factory.replace(match.group(0), f"IVF{lists}", 1)
        index = faiss.index_factory(vectors.shape[1], factory, faiss.METRIC_INNER_PRODUCT)
        if hasattr(index, "do_polysemous_training"):  # IndexPQ, IndexIVFPQ
            index.do_polysemous_training = False  # minutes of annealing for a Hamming filter never used here
        if not index.is_trained:
            try:
                index.train(vectors)
            except RuntimeError as exc:  # e.g. PQ: 256 training points a sub-quantizer
                asked = factory if factory == config.factory else f"{config.factory} (as {factory})"
                raise BadInputError(f"FAISS {asked!r} cannot be trained on {len(vectors)} vectors ({faiss_reason(exc)}); a "
                                    "corpus this small takes Flat or HNSW32 (dense.factory: auto chooses)") from None
        index.add(vectors)
        return cls(index, stored, config, factory)

    def extend(self, vectors: np.ndarray) -> DenseIndex:
        """Add rows to the built index (no retraining, no rebuild: IVF lists and HNSW graphs take new vectors)."""
        stored = np.asarray(vectors, dtype=np.float16)
        self.index.add(np.ascontiguousarray(stored, dtype=np.float32))  # type: ignore[attr-defined]
        self._tail.append(stored)
        return self

    def save(self, folder: Path) -> None:
        """Write the FAISS index and the stored vectors. After `extend` on a loaded index, the stored file is copied
        by the kernel and the new rows written after it (`append_rows`): the old rows never pass through Python."""
        faiss = require("faiss", "dense retrieval")
        faiss.write_index(self.index, str(folder / INDEX_FILE))
        if self._tail and self._source is not None and append_rows(self._source, folder / VECTORS_FILE, self._tail):
            return
        np.save(folder / VECTORS_FILE, self.vectors, allow_pickle=False)

    @classmethod
    def load(cls, folder: Path, config: DenseConfig) -> DenseIndex:
        faiss = require("faiss", "dense retrieval")
        try:
            index = faiss.read_index(str(folder / INDEX_FILE))
            vectors = np.load(folder / VECTORS_FILE, mmap_mode="r", allow_pickle=False)
        except (RuntimeError, ValueError, OSError, EOFError) as exc:
            raise IndexError_(f"dense index in {folder} is unreadable ({exc}); rebuild it with `local-rag index build`") from exc
        if index.ntotal != vectors.shape[0]:
            raise IndexError_(f"dense index in {folder} holds {index.ntotal} vectors but {vectors.shape[0]} are stored; rebuild it")
        dense = cls(index, vectors, config, source=folder / VECTORS_FILE)
        dense._tune()
        return dense

    def _tune(self) -> None:
        faiss = require("faiss", "dense retrieval")
        ivf = faiss.try_extract_index_ivf(self.index) if hasattr(faiss, "try_extract_index_ivf") else None
        if ivf is not None:
            ivf.nprobe = self.config.nprobe
        hnsw = getattr(self.index, "hnsw", None)
        if hnsw is not None:
            hnsw.efSearch = self.config.ef_search
        where, why = gpu_placement(type(self.index).__name__, self.config.use_gpu, faiss_gpu_count())
        if where == "cpu":
            if self.config.use_gpu == "yes" or faiss_gpu_count():
                log.warning("dense index: %s", why)
            return
        try:
            self._resources = faiss.StandardGpuResources()
            self._resources.setTempMemory(GPU_TEMP_MEMORY)
            if where == "gpu-flat":
                flat = faiss.index_cpu_to_gpu(self._resources, 0, faiss.IndexFlatIP(self.dimension))
                flat.add(np.ascontiguousarray(self.vectors, dtype=np.float32))
                self.index = flat
                log.info("dense index: %s", why)
            else:
                self.index = faiss.index_cpu_to_gpu(self._resources, 0, self.index)
            self.on_gpu = True
        except (RuntimeError, AttributeError) as exc:  # an unsupported index or a CUDA error: the CPU index stays
            log.warning("dense index: moving %s to the GPU failed (%s): searching on the CPU",
                        type(self.index).__name__, exc)

    def search_rows(self, query_vectors: np.ndarray, k: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` rows among those ``mask`` keeps (a search scoped to some documents, `local_rag.retrieve.scope`).

        A flat index on the CPU searches with an ID selector (exact). Other indexes search a scope of at most
        `EXACT_ROWS` rows exactly, by inner product with the stored vectors: an IVF list or an HNSW walk holds few
        rows of a narrow scope (measured: IVF632,SQ8 nprobe 16 found 10 of a 400-row scope of 400,000 rows). A wider
        scope goes through the index with the selector, as approximate as an unscoped search, and exactly again when
        that finds fewer than ``k`` rows. Figures: docs/benchmarks.md, "Asking about some documents".
        """
        rows = np.flatnonzero(mask)
        k = min(k, len(rows))
        if k and (isinstance(self.index, _faiss_flat()) or len(rows) > EXACT_ROWS) and not self.on_gpu:
            found = self._selected(query_vectors, k, mask)
            if found is not None and (found[0] >= 0).all():
                return found
        return self._exact(query_vectors, k, rows)

    def _selected(self, query_vectors: np.ndarray, k: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """FAISS's own search restricted by an ``IDSelectorBitmap`` (None: the index type takes no selector)."""
        faiss = require("faiss", "dense retrieval")
        bits = np.packbits(mask, bitorder="little")  # held until the search returns: the selector points into it
        selector = faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bits))
        hnsw = getattr(self.index, "hnsw", None)
        if faiss.try_extract_index_ivf(self.index) is not None:
            params = faiss.SearchParametersIVF(sel=selector, nprobe=self.config.nprobe)
        elif hnsw is not None:
            params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(self.config.ef_search, k))
        else:
            params = faiss.SearchParameters(sel=selector)
        try:
            scores, rows = self.index.search(np.ascontiguousarray(query_vectors, dtype=np.float32), k, params=params)  # type: ignore[attr-defined]
        except (RuntimeError, TypeError):  # e.g. an index wrapped in a transform: searched exactly instead
            return None
        return self._checked(rows.astype(np.int64), scores.astype(np.float32))

    def _exact(self, query_vectors: np.ndarray, k: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Inner products with the stored vectors of ``rows``, in blocks of `SUBSET_BLOCK`; ties by row."""
        queries = np.ascontiguousarray(query_vectors, dtype=np.float32)
        best_rows = np.full((len(queries), k), -1, dtype=np.int64)
        best = np.full((len(queries), k), -np.inf, dtype=np.float32)
        for start in range(0, len(rows) if k else 0, SUBSET_BLOCK):
            part = rows[start : start + SUBSET_BLOCK]
            scores = queries @ np.asarray(self.vectors[part], dtype=np.float32).T
            part_rows = np.broadcast_to(part, scores.shape)
            if scores.shape[1] > k:  # the block's own top k first (ties at its k-th score: any of them)
                top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
                scores, part_rows = np.take_along_axis(scores, top, 1), np.take_along_axis(part_rows, top, 1)
            all_rows = np.concatenate([best_rows, part_rows], axis=1)
            all_scores = np.concatenate([best, scores], axis=1)
            order = np.lexsort((all_rows, -all_scores), axis=1)[:, :k]  # best first, ties by row
            best_rows, best = np.take_along_axis(all_rows, order, 1), np.take_along_axis(all_scores, order, 1)
        return best_rows, best

    def search(self, query_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` rows and inner products per query (rows ``-1`` where the index has fewer)."""
        k = min(k, self.size)
        scores, rows = self.index.search(np.ascontiguousarray(query_vectors, dtype=np.float32), k)  # type: ignore[attr-defined]
        return self._checked(rows.astype(np.int64), scores.astype(np.float32))

    def _checked(self, rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = rows >= 0
        # inner products of unit vectors lie in [-1, 1]: anything else is a corrupt index, never a result
        if (rows >= self.size).any() or not np.isfinite(scores[found]).all() or (np.abs(scores[found]) > 1.01).any():
            raise IndexError_("the dense index returned impossible results (rows or scores out of range): it is "
                              "corrupt; run `local-rag index verify` and rebuild it")
        return rows, scores
